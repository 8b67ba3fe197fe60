import { MODULES } from './catalog.js';
import type { FieldSpec, RawRecord, StreamModel } from './model.js';
import { EXTRA_FIELD } from './model.js';
import { hashInts, rngFor, type Rng } from './prng.js';
import { TRAINING } from '../src/catalog/reports.js';
import { SECONDS_PER_DAY, WINDOW_END, WINDOW_START } from './time.js';
import { UserDirectory } from './users.js';

const FIELDS: readonly FieldSpec[] = [
  { name: 'userId', kind: 'string' },
  { name: 'email', kind: 'string' },
  { name: 'firstName', kind: 'string' },
  { name: 'lastName', kind: 'string' },
  { name: 'employeeNumber', kind: 'string' },
  { name: 'groupId', kind: 'string' },
  { name: 'programId', kind: 'string' },
  { name: 'programName', kind: 'string' },
  { name: 'moduleId', kind: 'string' },
  { name: 'moduleName', kind: 'string' },
  { name: 'availableFrom', kind: 'date' },
  { name: 'completed', kind: 'boolean' },
  { name: 'completedAt', kind: 'date' },
  { name: 'progress', kind: 'integer' },
  { name: 'score', kind: 'number' },
  { name: 'timeSpentSeconds', kind: 'integer' },
  { name: 'lastActivityAt', kind: 'date' },
];

/**
 * Row i belongs to user floor(i / MODULES_PER_USER) and to that user's
 * (i mod MODULES_PER_USER)-th module, counted from a per-user offset in the
 * module list. Distinct i therefore give distinct (userId, programId, moduleId),
 * including rows appended later.
 */
export const MODULES_PER_USER = 8;

/** Share of completions recorded by a bulk import at one instant per module: exact ties. */
const IMPORTED_SHARE = 0.25;

/** The day a module opened to users: spread over the data window by the seed. */
function launchDay(seed: number, moduleIndex: number): number {
  return WINDOW_START + (hashInts(seed, 11, moduleIndex) % 540) * SECONDS_PER_DAY;
}

/** The one instant at which a module's imported completions are recorded. */
function importInstant(seed: number, moduleIndex: number): number {
  return launchDay(seed, moduleIndex) + 45 * SECONDS_PER_DAY + 14 * 3600 + 30 * 60;
}

/** The user and module of row `index`: the fields that never change for the row. */
function identityOf(seed: number, users: UserDirectory, index: number): RawRecord {
  const u = Math.floor(index / MODULES_PER_USER);
  const slot = index % MODULES_PER_USER;
  const moduleIndex = ((hashInts(seed, u, 7) % MODULES.length) + slot) % MODULES.length;
  const mod = MODULES[moduleIndex];
  const user = users.get(u);
  return {
    userId: user.userId,
    email: user.email,
    employeeNumber: user.employeeNumber,
    groupId: user.groupId,
    department: user.department, // EXTRA_FIELD
    firstName: user.firstName,
    lastName: user.lastName,
    programId: mod.programId,
    programName: mod.programName,
    moduleId: mod.moduleId,
    moduleName: mod.moduleName,
    moduleIndex,
  };
}

function availableFrom(seed: number, identity: RawRecord, rng: Rng): number {
  return launchDay(seed, identity.moduleIndex as number) + rng.int(0, 4) * 7 * SECONDS_PER_DAY;
}

function completion(rng: Rng): { score: number; timeSpentSeconds: number } {
  return { score: rng.int(400, 1000) / 10, timeSpentSeconds: rng.int(300, 5400) };
}

/** What a row's activity fields hold. */
interface Activity {
  completedAt: number | null;
  progress: number;
  score: number | null;
  timeSpentSeconds: number | null;
  lastActivityAt: number | null;
}

/** A completed row: imported at its module's import instant, or completed in a five-minute office-hours slot (many rows share an instant). */
function completedActivity(seed: number, rng: Rng, from: number, moduleIndex: number): Activity {
  const at = rng.chance(IMPORTED_SHARE) ? importInstant(seed, moduleIndex) : from + rng.int(0, 120) * SECONDS_PER_DAY + rng.int(8 * 12, 18 * 12) * 300;
  const completedAt = Math.min(at, WINDOW_END - 3600);
  const { score, timeSpentSeconds } = completion(rng);
  return { completedAt, progress: 100, score, timeSpentSeconds, lastActivityAt: completedAt };
}

/** A row not completed yet: some progress (or none), time spent, and the last activity if any. */
function openActivity(rng: Rng, from: number): Activity {
  const progress = rng.chance(0.3) ? 0 : rng.int(1, 99);
  const timeSpentSeconds = rng.chance(0.02) ? null : progress * rng.int(5, 40);
  const lastActivityAt = progress === 0 ? null : Math.min(from + rng.int(0, 90) * SECONDS_PER_DAY + rng.int(0, SECONDS_PER_DAY - 1), WINDOW_END - 1);
  return { completedAt: null, progress, score: null, timeSpentSeconds, lastActivityAt };
}

/** The kind of appended rows that are a new user's assignments: open, untouched, available from the day they joined. */
export const JOINER = 'joiner';

function joinerRow(id: RawRecord, instant: number): RawRecord {
  return Object.assign(id, { availableFrom: instant - (instant % SECONDS_PER_DAY), completed: false, completedAt: null, progress: 0, score: null, timeSpentSeconds: 0, lastActivityAt: null });
}

export function createTrainingModel(seed: number): StreamModel {
  const users = new UserDirectory(seed);
  const identity = (index: number): RawRecord => identityOf(seed, users, index);

  return {
    descriptor: TRAINING,
    fields: FIELDS,
    identityFields: new Set([...FIELDS.slice(0, 10).map((f) => f.name), EXTRA_FIELD]),
    identity,

    complete(index, id) {
      const rng = rngFor(seed, 'training', index);
      const from = availableFrom(seed, id, rng);
      const completed = rng.chance(0.55);
      const activity = completed ? completedActivity(seed, rng, from, id.moduleIndex as number) : openActivity(rng, from);
      // Identity objects are fresh per call: filling them in avoids object spreads, which are slow here.
      id.availableFrom = from;
      id.completed = completed;
      id.completedAt = activity.completedAt;
      id.progress = activity.progress;
      id.score = activity.score;
      id.timeSpentSeconds = activity.timeSpentSeconds;
      id.lastActivityAt = activity.lastActivityAt;
      return id;
    },

    appended(index, position, instant, kind) {
      const id = identity(index);
      if (kind === JOINER) return joinerRow(id, instant);
      const rng = rngFor(seed, 'training-append', index);
      const completedAt = instant + (position % 4) * 60;
      return Object.assign(id, {
        availableFrom: availableFrom(seed, id, rng),
        completed: true,
        completedAt,
        progress: 100,
        ...completion(rng),
        lastActivityAt: completedAt,
      });
    },

    appendSpan: (count) => Math.min(Math.max(count - 1, 0), 3) * 60,

    update(record, index, position, instant) {
      if (record.completed !== false) return null;
      const rng = rngFor(seed, 'training-update', index);
      const completedAt = instant + (position % 4) * 60;
      const { score, timeSpentSeconds } = completion(rng);
      return {
        completed: true,
        completedAt,
        progress: 100,
        score,
        timeSpentSeconds: ((record.timeSpentSeconds as number | null) ?? 0) + timeSpentSeconds,
        lastActivityAt: completedAt,
      };
    },

    updateSpan: 180,
  };
}

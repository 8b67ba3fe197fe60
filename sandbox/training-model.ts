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

export function createTrainingModel(seed: number): StreamModel {
  const users = new UserDirectory(seed);
  const moduleCount = MODULES.length;

  const launchDay = (m: number): number => WINDOW_START + (hashInts(seed, 11, m) % 540) * SECONDS_PER_DAY;
  const importInstant = (m: number): number => launchDay(m) + 45 * SECONDS_PER_DAY + 14 * 3600 + 30 * 60;

  function identity(index: number): RawRecord {
    const u = Math.floor(index / MODULES_PER_USER);
    const slot = index % MODULES_PER_USER;
    const moduleIndex = (hashInts(seed, u, 7) % moduleCount + slot) % moduleCount;
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

  function availableFrom(identityRecord: RawRecord, rng: Rng): number {
    return launchDay(identityRecord.moduleIndex as number) + rng.int(0, 4) * 7 * SECONDS_PER_DAY;
  }

  function completion(rng: Rng): { score: number; timeSpentSeconds: number } {
    return { score: rng.int(400, 1000) / 10, timeSpentSeconds: rng.int(300, 5400) };
  }

  return {
    descriptor: TRAINING,
    fields: FIELDS,
    identityFields: new Set([...FIELDS.slice(0, 10).map((f) => f.name), EXTRA_FIELD]),
    identity,

    complete(index, id) {
      const rng = rngFor(seed, 'training', index);
      const from = availableFrom(id, rng);
      const completed = rng.chance(0.55);
      let completedAt: number | null = null;
      let progress: number;
      let score: number | null = null;
      let timeSpentSeconds: number | null;
      let lastActivityAt: number | null;
      if (completed) {
        if (rng.chance(IMPORTED_SHARE)) {
          completedAt = importInstant(id.moduleIndex as number);
        } else {
          // Five-minute slots in office hours: many rows share an instant.
          completedAt = from + rng.int(0, 120) * SECONDS_PER_DAY + rng.int(8 * 12, 18 * 12) * 300;
        }
        completedAt = Math.min(completedAt, WINDOW_END - 3600);
        progress = 100;
        ({ score, timeSpentSeconds } = completion(rng));
        lastActivityAt = completedAt;
      } else {
        progress = rng.chance(0.3) ? 0 : rng.int(1, 99);
        timeSpentSeconds = rng.chance(0.02) ? null : progress * rng.int(5, 40);
        lastActivityAt =
          progress === 0
            ? null
            : Math.min(from + rng.int(0, 90) * SECONDS_PER_DAY + rng.int(0, SECONDS_PER_DAY - 1), WINDOW_END - 1);
      }
      // Identity objects are fresh per call: filling them in avoids object spreads, which are slow here.
      id.availableFrom = from;
      id.completed = completed;
      id.completedAt = completedAt;
      id.progress = progress;
      id.score = score;
      id.timeSpentSeconds = timeSpentSeconds;
      id.lastActivityAt = lastActivityAt;
      return id;
    },

    appended(index, position, instant) {
      const id = identity(index);
      const rng = rngFor(seed, 'training-append', index);
      const completedAt = instant + (position % 4) * 60;
      return Object.assign(id, {
        availableFrom: availableFrom(id, rng),
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

import { CAMPAIGN_THEMES, TEMPLATES } from './catalog.js';
import type { FieldSpec, RawRecord, StreamModel } from './model.js';
import { EXTRA_FIELD } from './model.js';
import { hashInts, rngFor, type Rng } from './prng.js';
import { PHISHING } from '../src/catalog/reports.js';
import { SECONDS_PER_DAY, WINDOW_START } from './time.js';
import { UserDirectory } from './users.js';

const FIELDS: readonly FieldSpec[] = [
  { name: 'userId', kind: 'string' },
  { name: 'email', kind: 'string' },
  { name: 'employeeNumber', kind: 'string' },
  { name: 'groupId', kind: 'string' },
  { name: 'campaignId', kind: 'string' },
  { name: 'campaignName', kind: 'string' },
  { name: 'templateName', kind: 'string' },
  { name: 'sentAt', kind: 'date' },
  { name: 'openedAt', kind: 'date' },
  { name: 'clickedAt', kind: 'date' },
  { name: 'submittedDataAt', kind: 'date' },
  { name: 'reportedAt', kind: 'date' },
];

/** Appended sends go out in batches of this size, five minutes apart. */
const APPEND_BATCH = 25;

/**
 * Row i belongs to campaign floor(i / P) and to user (i mod P + 37 c) mod P,
 * a bijection inside each campaign: (userId, campaignId) is unique for every i.
 * P (recipients per campaign) depends on the initial size so that any size gives
 * about ten campaigns.
 */
export function recipientsPerCampaign(initialCount: number): number {
  return Math.max(50, Math.ceil(initialCount / 10));
}

/** When campaign `c` starts sending: a day of the data window and an office hour, by the seed. */
function campaignStart(seed: number, c: number): number {
  const day = hashInts(seed, 21, c) % 690;
  const hour = 7 + (hashInts(seed, 22, c) % 10);
  return WINDOW_START + day * SECONDS_PER_DAY + hour * 3600;
}

/** The recipient and campaign of row `index`: the fields that never change for the row. */
function identityOf(seed: number, users: UserDirectory, perCampaign: number, index: number): RawRecord {
  const c = Math.floor(index / perCampaign);
  const slot = index % perCampaign;
  const u = (slot + ((c * 37) % perCampaign)) % perCampaign;
  const wave = Math.floor(c / CAMPAIGN_THEMES.length) + 1;
  const user = users.get(u);
  return {
    userId: user.userId,
    email: user.email,
    employeeNumber: user.employeeNumber,
    groupId: user.groupId,
    department: user.department, // EXTRA_FIELD
    campaignId: `cmp-${String(c + 1).padStart(4, '0')}`,
    campaignName: `${CAMPAIGN_THEMES[c % CAMPAIGN_THEMES.length]} (wave ${wave})`,
    templateName: TEMPLATES[hashInts(seed, 23, c) % TEMPLATES.length],
    slot,
    campaign: c,
  };
}

/** What a recipient did after `sentAt`: opened, then maybe clicked (and submitted data), and maybe reported; null where they did not. */
function events(rng: Rng, sentAt: number): { openedAt: number | null; clickedAt: number | null; submittedDataAt: number | null; reportedAt: number | null } {
  if (!rng.chance(0.55)) return { openedAt: null, clickedAt: null, submittedDataAt: null, reportedAt: null };
  const openedAt = sentAt + rng.int(1, 72 * 60) * 60;
  let clickedAt: number | null = null;
  let submittedDataAt: number | null = null;
  if (rng.chance(0.35)) {
    clickedAt = openedAt + rng.int(0, 30) * 60;
    if (rng.chance(0.4)) submittedDataAt = clickedAt + rng.int(1, 10) * 60;
  }
  const reportedAt = rng.chance(0.3) ? (clickedAt ?? openedAt) + rng.int(1, 240) * 60 : null;
  return { openedAt, clickedAt, submittedDataAt, reportedAt };
}

export function createPhishingModel(seed: number, initialCount: number): StreamModel {
  const users = new UserDirectory(seed);
  const perCampaign = recipientsPerCampaign(initialCount);
  // A campaign sends in at most ~48 waves, each wave at one instant (ties).
  const waveSize = Math.max(25, Math.ceil(perCampaign / 48));
  const identity = (index: number): RawRecord => identityOf(seed, users, perCampaign, index);

  return {
    descriptor: PHISHING,
    fields: FIELDS,
    identityFields: new Set([...FIELDS.slice(0, 7).map((f) => f.name), EXTRA_FIELD]),
    identity,

    complete(index, id) {
      const rng = rngFor(seed, 'phishing', index);
      const sentAt = campaignStart(seed, id.campaign as number) + Math.floor((id.slot as number) / waveSize) * 300;
      const happened = events(rng, sentAt);
      // Identity objects are fresh per call: filling them in avoids object spreads, which are slow here.
      id.sentAt = sentAt;
      id.openedAt = happened.openedAt;
      id.clickedAt = happened.clickedAt;
      id.submittedDataAt = happened.submittedDataAt;
      id.reportedAt = happened.reportedAt;
      return id;
    },

    appended(index, position, instant) {
      return Object.assign(identity(index), {
        sentAt: instant + Math.floor(position / APPEND_BATCH) * 300,
        openedAt: null,
        clickedAt: null,
        submittedDataAt: null,
        reportedAt: null,
      });
    },

    appendSpan: (count) => Math.floor(Math.max(count - 1, 0) / APPEND_BATCH) * 300,

    update(record, _index, position, instant) {
      if (record.openedAt !== null || record.sentAt === null) return null;
      const openedAt = instant + (position % 3) * 60;
      return {
        openedAt,
        clickedAt: position % 2 === 0 ? openedAt + 120 : null,
        reportedAt: position % 3 === 0 ? openedAt + 600 : null,
      };
    },

    updateSpan: 720,
  };
}

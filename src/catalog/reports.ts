/**
 * The report streams, described as data. Everything that is per stream reads
 * these descriptors: discovery, the per-stream parts of the config schema
 * (filters, key_properties), the engine, the sandbox and the tests' helpers.
 * A third report is one descriptor here and one schema file in schemas/ (the
 * sandbox also needs a data model to serve it: sandbox/model.ts).
 */

export type FilterType = 'string' | 'boolean' | 'date';

export interface FilterField {
  /** Query parameter name inside `filter[...]`. */
  readonly name: string;
  readonly type: FilterType;
  readonly description: string;
  /** Record property the filter compares against. */
  readonly recordField: string;
}

export interface StreamDescriptor {
  readonly name: string;
  /** Path under the base URL, without the `.csv` / `.jsonl` suffix. */
  readonly path: string;
  /** Bearer-token scope the dump requires. */
  readonly scope: string;
  /** JSON Schema of a record: a file name in the package's schemas/ folder, or an absolute path. */
  readonly schemaFile: string;
  readonly keyProperties: readonly string[];
  readonly replicationKey: string;
  /** Filter that narrows the dump by the replication key. */
  readonly replicationFilter: string;
  /** Fields that hold personal data (e-mail, names, user ID, employee number): their values never appear in logs. */
  readonly personalFields: readonly string[];
  readonly filters: readonly FilterField[];
  /**
   * The filter that selects the rows still open (their replication key not
   * set yet, so no incremental filter finds them), read again on every
   * incremental run: training's `completed=false`. Absent: the report has none.
   */
  readonly openRows?: { readonly filter: string; readonly value: string };
  /** Days before a run during which rows are read again by their replication key, for events that arrive later (the event_window_days default). */
  readonly eventWindowDays?: number;
}

export const TRAINING = {
  name: 'training',
  path: '/public/v1/report/training/dump',
  scope: 'report:training:read',
  schemaFile: 'training.json',
  keyProperties: ['userId', 'programId', 'moduleId'],
  replicationKey: 'completedAt',
  replicationFilter: 'completedAt',
  personalFields: ['userId', 'email', 'firstName', 'lastName', 'employeeNumber'],
  filters: [
    { name: 'program', type: 'string', recordField: 'programId', description: 'Program ID.' },
    { name: 'module', type: 'string', recordField: 'moduleId', description: 'Module ID.' },
    { name: 'user', type: 'string', recordField: 'userId', description: 'User ID.' },
    { name: 'email', type: 'string', recordField: 'email', description: 'User e-mail address.' },
    { name: 'group', type: 'string', recordField: 'groupId', description: 'Group ID.' },
    { name: 'completed', type: 'boolean', recordField: 'completed', description: 'Completion status.' },
    { name: 'completedAt', type: 'date', recordField: 'completedAt', description: 'Completion date, optionally prefixed with >=, >, <=, <.' },
    { name: 'availableFrom', type: 'date', recordField: 'availableFrom', description: 'Module availability date, optionally prefixed with >=, >, <=, <.' },
  ],
  openRows: { filter: 'completed', value: 'false' },
} as const satisfies StreamDescriptor;

export const PHISHING = {
  name: 'phishing',
  path: '/public/v1/report/phishing/dump',
  scope: 'report:phishing:read',
  schemaFile: 'phishing.json',
  keyProperties: ['userId', 'campaignId'],
  replicationKey: 'sentAt',
  replicationFilter: 'sentAt',
  personalFields: ['userId', 'email', 'employeeNumber'],
  filters: [
    { name: 'user', type: 'string', recordField: 'userId', description: 'User ID.' },
    { name: 'email', type: 'string', recordField: 'email', description: 'User e-mail address.' },
    { name: 'employeeNumber', type: 'string', recordField: 'employeeNumber', description: 'User employee number.' },
    { name: 'group', type: 'string', recordField: 'groupId', description: 'User group ID.' },
    { name: 'campaign', type: 'string', recordField: 'campaignId', description: 'Campaign ID.' },
    { name: 'sentAt', type: 'date', recordField: 'sentAt', description: 'Sent date, optionally prefixed with >=, >, <=, <.' },
  ],
  // Opens, clicks and reports arrive hours or days after the send, which does not change.
  eventWindowDays: 14,
} as const satisfies StreamDescriptor;

/** The reports this connector ships. */
export const REPORTS = [TRAINING, PHISHING] as const satisfies readonly StreamDescriptor[];

/** The name of a shipped report: `training` | `phishing`. */
export type StreamName = (typeof REPORTS)[number]['name'];

export function reportByName(name: string, reports: readonly StreamDescriptor[] = REPORTS): StreamDescriptor | undefined {
  return reports.find((s) => s.name === name);
}

export type DumpFormat = 'jsonl' | 'csv';
export const FORMATS: readonly DumpFormat[] = ['jsonl', 'csv'];

/** Media types the sandbox serves; the tap accepts any media type. */
export const MEDIA_TYPES: Readonly<Record<DumpFormat, string>> = {
  jsonl: 'application/jsonl; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
};

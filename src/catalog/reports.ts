/**
 * The two report streams, described as data. The tap's engine, its catalog and
 * the sandbox server all read these descriptors, so adding a third report means
 * one descriptor and one schema file.
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

export type StreamName = 'training' | 'phishing';

export interface StreamDescriptor {
  readonly name: StreamName;
  /** Path under the base URL, without the `.csv` / `.jsonl` suffix. */
  readonly path: string;
  /** Bearer-token scope the dump requires. */
  readonly scope: string;
  readonly schemaFile: string;
  readonly keyProperties: readonly string[];
  readonly replicationKey: string;
  /** Filter that narrows the dump by the replication key. */
  readonly replicationFilter: string;
  readonly filters: readonly FilterField[];
}

export const TRAINING: StreamDescriptor = {
  name: 'training',
  path: '/public/v1/report/training/dump',
  scope: 'report:training:read',
  schemaFile: 'training.json',
  keyProperties: ['userId', 'programId', 'moduleId'],
  replicationKey: 'completedAt',
  replicationFilter: 'completedAt',
  filters: [
    { name: 'program', type: 'string', recordField: 'programId', description: 'Program ID.' },
    { name: 'module', type: 'string', recordField: 'moduleId', description: 'Module ID.' },
    { name: 'user', type: 'string', recordField: 'userId', description: 'User ID.' },
    { name: 'email', type: 'string', recordField: 'email', description: 'User e-mail address.' },
    { name: 'group', type: 'string', recordField: 'groupId', description: 'Group ID.' },
    { name: 'completed', type: 'boolean', recordField: 'completed', description: 'Completion status (true or false).' },
    { name: 'completedAt', type: 'date', recordField: 'completedAt', description: 'Completion date, optionally prefixed with >=, >, <=, <.' },
    { name: 'availableFrom', type: 'date', recordField: 'availableFrom', description: 'Module availability date, optionally prefixed with >=, >, <=, <.' },
  ],
};

export const PHISHING: StreamDescriptor = {
  name: 'phishing',
  path: '/public/v1/report/phishing/dump',
  scope: 'report:phishing:read',
  schemaFile: 'phishing.json',
  keyProperties: ['userId', 'campaignId'],
  replicationKey: 'sentAt',
  replicationFilter: 'sentAt',
  filters: [
    { name: 'user', type: 'string', recordField: 'userId', description: 'User ID.' },
    { name: 'email', type: 'string', recordField: 'email', description: 'User e-mail address.' },
    { name: 'employeeNumber', type: 'string', recordField: 'employeeNumber', description: 'User employee number.' },
    { name: 'group', type: 'string', recordField: 'groupId', description: 'User group ID.' },
    { name: 'campaign', type: 'string', recordField: 'campaignId', description: 'Campaign ID.' },
    { name: 'sentAt', type: 'date', recordField: 'sentAt', description: 'Sent date, optionally prefixed with >=, >, <=, <.' },
  ],
};

export const STREAMS: readonly StreamDescriptor[] = [TRAINING, PHISHING];

export function streamByName(name: string): StreamDescriptor | undefined {
  return STREAMS.find((s) => s.name === name);
}

export type DumpFormat = 'jsonl' | 'csv';
export const FORMATS: readonly DumpFormat[] = ['jsonl', 'csv'];

/** Media types the sandbox serves; the tap accepts any media type. */
export const MEDIA_TYPES: Readonly<Record<DumpFormat, string>> = {
  jsonl: 'application/jsonl; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
};

import type { OutputProtocol } from '../output/protocol.js';

/** Singer messages: SCHEMA, RECORD with time_extracted (and version), a cumulative STATE, BATCH and ACTIVATE_VERSION. */
export const singer: OutputProtocol = {
  reader: 'target',
  // Targets with hard_delete remove a row whose RECORD carries it; the others keep the row with it set and its fields null.
  deletionMember: '_sdc_deleted_at',
  // Targets upsert records in the order they come.
  lastRecordWins: true,
  schema: (stream, schema, keyProperties, bookmarkProperties) =>
    JSON.stringify({ type: 'SCHEMA', stream, schema, key_properties: keyProperties, bookmark_properties: bookmarkProperties }),
  recordEnvelope: (stream, extractedAt, version) => ({
    head: `{"type":"RECORD","stream":${JSON.stringify(stream)},"record":`,
    tail: `${version === undefined ? '' : `,"version":${version}`},"time_extracted":${JSON.stringify(extractedAt.toISOString())}}`,
  }),
  // Cumulative: some targets forward only the first or the last STATE they see.
  state: (_stream, whole) => JSON.stringify({ type: 'STATE', value: whole }),
  // The Meltano SDK's BATCH message: one per file, so a target can load each as soon as it exists.
  batch: (stream, encoding, manifest) => JSON.stringify({ type: 'BATCH', stream, encoding, manifest }),
  // The Singer spec's message and the Meltano SDK's shape: the version is an integer (epoch milliseconds of the pass).
  activateVersion: (stream, version) => JSON.stringify({ type: 'ACTIVATE_VERSION', stream, version }),
};

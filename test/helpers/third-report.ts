import { fileURLToPath } from 'node:url';
import type { StreamDescriptor } from '../../src/catalog/reports.js';
import type { RawRecord, StreamModel } from '../../sandbox/model.js';
import { hashInts } from '../../sandbox/prng.js';
import { WINDOW_START } from '../../sandbox/time.js';

/**
 * A report the connector does not ship, policy acknowledgements: its
 * descriptor and schema file are all the tap needs; the sandbox needs a data
 * model to serve it, which is this file's other half.
 */

export const ACKNOWLEDGEMENTS = {
  name: 'acknowledgements',
  path: '/public/v1/report/acknowledgements/dump',
  scope: 'report:acknowledgements:read',
  schemaFile: fileURLToPath(new URL('../fixtures/reports/acknowledgements.json', import.meta.url)),
  keyProperties: ['userId', 'policyId'],
  replicationKey: 'acknowledgedAt',
  replicationFilter: 'acknowledgedAt',
  personalFields: ['userId', 'email'],
  filters: [
    { name: 'policy', type: 'string', recordField: 'policyId', description: 'Policy ID.' },
    { name: 'user', type: 'string', recordField: 'userId', description: 'User ID.' },
    { name: 'acknowledgedAt', type: 'date', recordField: 'acknowledgedAt', description: 'Acknowledgement date, optionally prefixed with >=, >, <=, <.' },
  ],
} as const satisfies StreamDescriptor;

const POLICIES = 3;

/** Row i: user floor(i / 3), policy i mod 3; two thirds acknowledged, on whole hours of 2024-2025. */
export function acknowledgementsModel(seed: number): StreamModel {
  const identity = (index: number): RawRecord => {
    const u = Math.floor(index / POLICIES);
    return { userId: `usr-${String(u).padStart(7, '0')}`, email: `user.${u}@example.com`, policyId: `pol-${(index % POLICIES) + 1}` };
  };
  return {
    descriptor: ACKNOWLEDGEMENTS,
    fields: [
      { name: 'userId', kind: 'string' },
      { name: 'email', kind: 'string' },
      { name: 'policyId', kind: 'string' },
      { name: 'acknowledged', kind: 'boolean' },
      { name: 'acknowledgedAt', kind: 'date' },
      { name: 'version', kind: 'integer' },
    ],
    identityFields: new Set(['userId', 'email', 'policyId']),
    identity,
    complete(index, id) {
      const acknowledged = hashInts(seed, 41, index) % 3 !== 0;
      const at = WINDOW_START + (hashInts(seed, 42, index) % (700 * 24)) * 3600;
      return { ...id, acknowledged, acknowledgedAt: acknowledged ? at : null, version: acknowledged ? 1 + (index % 2) : null };
    },
    appended: (index, _position, instant) => ({ ...identity(index), acknowledged: true, acknowledgedAt: instant, version: 3 }),
    appendSpan: () => 0,
    update: (record, _index, _position, instant) => (record.acknowledged ? null : { acknowledged: true, acknowledgedAt: instant, version: 3 }),
    updateSpan: 0,
  };
}

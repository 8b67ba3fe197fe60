import { describe, expect, it } from 'vitest';
import { buildQuery } from '../../src/http/query.js';
import { PHISHING, TRAINING } from '../../src/catalog/reports.js';
import { dumpUrl } from '../../src/http/client.js';

const bound = Date.UTC(2024, 4, 1, 8);

describe('the incremental filter combines with configured filters', () => {
  it('adds >= bookmark when no filter names the replication key', () => {
    expect(buildQuery(TRAINING, { program: 'p-1', completed: true }, bound).query).toEqual([
      ['filter[program]', 'p-1'],
      ['filter[completed]', 'true'],
      ['filter[completedAt]', '>=2024-05-01T08:00:00Z'],
    ]);
    expect(buildQuery(PHISHING, {}, undefined).query).toEqual([]);
  });

  it('keeps a configured lower bound when it is later, and the bookmark when it is later', () => {
    expect(buildQuery(PHISHING, { sentAt: '>=2025-01-01' }, bound).query).toEqual([['filter[sentAt]', '>=2025-01-01']]);
    expect(buildQuery(PHISHING, { sentAt: '>2020-01-01' }, bound).query).toEqual([['filter[sentAt]', '>=2024-05-01T08:00:00Z']]);
  });

  it('sends a configured upper bound as is and leaves the lower bound to the client side', () => {
    const q = buildQuery(TRAINING, { completedAt: '<2025-01-01' }, bound);
    expect(q.query).toEqual([['filter[completedAt]', '<2025-01-01']]);
    expect(q.clientLowerBoundMs).toBe(bound);
  });

  it('never puts a value into the URL unescaped', () => {
    const url = dumpUrl('https://api.example.com', { stream: TRAINING, format: 'jsonl', query: [['filter[email]', 'a+b&c=d@example.com'], ['filter[completedAt]', '>=2024-05-01T08:00:00+02:00']] });
    expect(url).toBe('https://api.example.com/public/v1/report/training/dump.jsonl?filter%5Bemail%5D=a%2Bb%26c%3Dd%40example.com&filter%5BcompletedAt%5D=%3E%3D2024-05-01T08%3A00%3A00%2B02%3A00');
  });
});

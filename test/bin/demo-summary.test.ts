import { describe, expect, it } from 'vitest';
import { demoSummaryLines, type DemoFacts } from '../../src/bin/demo-summary.js';

const TRAINING_SAMPLE = '{"type":"RECORD","stream":"training","record":{"userId":"usr-0000000","email":"a.b.0@example.com","score":86.20},"version":1,"time_extracted":"2026-01-01T00:00:00.000Z"}';

const facts: DemoFacts = {
  sandboxUrl: 'http://127.0.0.1:41234',
  recordsPerStream: 2000,
  layout: 'packaged',
  streams: [
    { stream: 'training', records: 2000, seconds: 0.437, bookmark: '2025-11-03T16:40:00Z', sample: TRAINING_SAMPLE },
    { stream: 'phishing', records: 0, seconds: 0.05, bookmark: null, sample: undefined },
  ],
  messages: 2006,
  bytes: 1_234_567,
  personalData: [],
};

describe('the demo summary on a terminal', () => {
  const lines = demoSummaryLines(facts);

  it('first names the sandbox it started: its URL, the records per stream and the layout', () => {
    expect(lines[0]).toBe('The demo started a sandbox of the report dump API at http://127.0.0.1:41234 (synthetic data, 2,000 records per stream, packaged layout) and synced 2 streams from it:');
  });

  it('gives each stream a line with its record count, time and bookmark, and below it the first RECORD message exactly as emitted', () => {
    expect(lines[1]).toBe('  training: 2,000 records in 0.4 s, bookmark 2025-11-03T16:40:00Z');
    expect(lines[2]).toBe(`    ${TRAINING_SAMPLE}`);
  });

  it('gives a stream that sent no record its line and no sample', () => {
    expect(lines[3]).toBe('  phishing: 0 records in 0.1 s, bookmark none');
    expect(lines[4]).not.toMatch(/^ {4}/);
  });

  it('says, without a policy, that personal fields are shown as served and which setting hashes or drops them', () => {
    expect(lines[4]).toBe('Personal fields (user IDs, e-mail addresses, names) are shown as the sandbox serves them: the demo sets no personal_data policy; that setting hashes or drops them (README: Personal data and secrets).');
  });

  it('names the policies the samples were sent under when there are some', () => {
    const withPolicy = demoSummaryLines({ ...facts, personalData: [{ field: 'email', policy: 'hash' }, { field: 'firstName', policy: 'drop', stream: 'training' }] });
    expect(withPolicy[4]).toBe("Personal fields are shown as the demo's personal_data policy leaves them: email hash, training.firstName drop.");
  });

  it('says the messages and the state were counted, not printed, that redirected they go to stdout, and the next commands', () => {
    expect(lines.slice(5)).toEqual([
      'On a terminal, its 2,006 Singer messages (1.2 MB) were counted, not printed; the state (the last STATE message, with the bookmarks) was not kept.',
      'Redirected or piped, the demo writes every message to stdout, as a sync does.',
      'Next: npx tap-report-dump demo > messages.jsonl writes them to a file; README, Usage, syncs your own tenant (tap-report-dump sync --config config.json); docs/sandbox.md runs the sandbox on its own.',
    ]);
  });

  it('is a few lines: one a stream, one a sample, and four more', () => {
    expect(lines).toHaveLength(1 + 3 + 4);
  });
});

import { describe, expect, it } from 'vitest';
import { checkSource } from '../../../src/sync/pass/source-check.js';
import { planRun, type RunSettings } from '../../../src/sync/plan/read-plans.js';
import { IncrementalCursor } from '../../../src/sync/read/incremental.js';
import { discoverStreams } from '../../../src/catalog/discovery.js';
import { defaultSelection } from '../../../src/catalog/selection.js';
import type { DumpClient, DumpRequest, DumpResponse } from '../../../src/http/client.js';
import type { ReadResult } from '../../../src/sync/run-state.js';

/** A pass of several reads proves one unchanged source by asking its earlier reads again with If-Modified-Since. */

const NOW = Date.UTC(2026, 5, 15, 12);
const LM = 'Mon, 15 Jun 2026 11:00:00 GMT';
const training = defaultSelection(discoverStreams({})).find((s) => s.descriptor.name === 'training')!;
const SETTINGS: RunSettings = { filters: {}, lookback_window: 0, max_future_skew: 86_400, refresh_open_rows: true, event_window_days: {}, full_pass_interval_days: 7, emit_activate_version_messages: true, change_pass_interval_days: 1, start_date: '2025-01-01' };
const pass = planRun(training, SETTINGS, undefined, NOW, true);

function results(stamps: Array<string | undefined>): ReadResult[] {
  return pass.reads.map((plan, i) => ({ plan, cursor: new IncrementalCursor(plan), outcome: { status: 200, lastModified: stamps[i] } }));
}

/** A client answering each conditional request as told, recording what was asked. */
function client(answer: (request: DumpRequest) => DumpResponse): Pick<DumpClient, 'open'> & { asked: DumpRequest[] } {
  const asked: DumpRequest[] = [];
  return {
    asked,
    open: (request: DumpRequest) => {
      asked.push(request);
      return Promise.resolve(answer(request));
    },
  };
}

const request = (result: ReadResult): DumpRequest => ({ stream: training.descriptor, format: 'jsonl', query: result.plan.query });
const body = (lastModified: string | undefined, count: { aborted: number }): DumpResponse => ({ status: 200, lastModified, body: (async function* () {})(), abort: () => void count.aborted++, startedAt: 0 });

describe('checkSource', () => {
  it('asks every read but the last again, with If-Modified-Since its own Last-Modified: 304 proves it unchanged', async () => {
    const fake = client(() => ({ status: 304 }));
    expect(await checkSource(results([LM, 'Mon, 15 Jun 2026 11:00:05 GMT']), { client: fake, request })).toBeUndefined();
    expect(fake.asked).toEqual([{ stream: training.descriptor, format: 'jsonl', query: pass.reads[0].query, ifModifiedSince: LM }]);
  });

  it('takes the same Last-Modified from a service that ignores If-Modified-Since as proof, leaving its body unread', async () => {
    const count = { aborted: 0 };
    const fake = client(() => body('Monday, 15-Jun-26 11:00:00 GMT', count));
    expect(await checkSource(results([LM, LM]), { client: fake, request })).toBeUndefined();
    expect(count.aborted).toBe(1);
  });

  it('finds the source moved when the first read\'s answer has another Last-Modified now', async () => {
    const count = { aborted: 0 };
    const fake = client(() => body('Mon, 15 Jun 2026 11:00:01 GMT', count));
    expect(await checkSource(results([LM, 'Mon, 15 Jun 2026 11:00:01 GMT']), { client: fake, request })).toEqual({
      kind: 'moved',
      detail: `the answer to its full pass read changed after it was read (Last-Modified ${LM} then)`,
    });
    expect(count.aborted).toBe(1);
  });

  it('cannot prove anything without a Last-Modified on every read, and asks nothing then; a pass of one read needs no proof', async () => {
    const fake = client(() => ({ status: 304 }));
    expect(await checkSource(results([LM, undefined]), { client: fake, request })).toEqual({ kind: 'unknown', detail: `the service sent no usable Last-Modified with its 2 reads (${LM}, none)` });
    expect(await checkSource(results([LM]).slice(0, 1), { client: fake, request })).toBeUndefined();
    expect(fake.asked).toEqual([]);
  });
});

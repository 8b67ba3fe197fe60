import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChangedRows } from '../../../src/sync/pass/changed-rows.js';
import { Envelope } from '../../../src/sync/read/decoders.js';
import { RowIdentity } from '../../../src/records/row-identity.js';
import { NextGeneration } from '../../../src/store/next-generation.js';
import { SentRows } from '../../../src/store/sent-rows.js';
import type { RecordSink } from '../../../src/output/record-sink.js';
import { tempFolder } from '../../helpers/files.js';

const EXPECT = { stream: 'training', fingerprint: 'fp-1' };
const ENVELOPE = new Envelope('{"type":"RECORD","stream":"training","record":', '}');

/** A sink that keeps the records' JSON it is given, in order. */
function collecting(): RecordSink & { records: string[] } {
  const records: string[] = [];
  const strip = (line: string) => line.slice(ENVELOPE.head.length, line.length - ENVELOPE.tail.length);
  let block = Buffer.alloc(0);
  return {
    records,
    pos: 0,
    full: false,
    drain: async () => undefined,
    reserve(bytes: number) {
      block = Buffer.alloc(bytes);
      return block;
    },
    commit(end: number) {
      records.push(strip(block.toString('utf8', 0, end - 1)));
    },
    line(text: string) {
      records.push(strip(text));
    },
    spliced(head: Buffer, source: Buffer, start: number, end: number) {
      records.push(source.toString('utf8', start, end));
    },
  };
}

/** One run of `rows` (record JSON) through the change store: what went out, the sink's counts, and the generation it wrote. */
async function run(folder: string, rows: readonly string[], confirmed: string | undefined, generation: string, options: { heldMaxBytes?: number; path?: 'line' | 'spliced' | 'commit'; all?: boolean; unsure?: boolean } = {}) {
  const sent = confirmed === undefined ? SentRows.empty() : await SentRows.load(join(folder, `${confirmed}.gen`), EXPECT);
  if ('untrusted' in sent) throw new Error(sent.untrusted);
  const next = await NextGeneration.create(folder, generation, { ...EXPECT, parent: confirmed ?? null });
  const out = collecting();
  const sink = new ChangedRows(out, new RowIdentity(['id']), sent, next, options.all !== true, options.heldMaxBytes);
  sink.read(ENVELOPE);
  for (const json of rows) {
    if (options.path === 'spliced') sink.spliced(ENVELOPE.headBytes, Buffer.from(json), 0, Buffer.byteLength(json), ENVELOPE.tailBytes);
    else if (options.path === 'commit') {
      const line = Buffer.from(ENVELOPE.line(json) + '\n');
      line.copy(sink.reserve(line.length), 0);
      sink.commit(line.length);
    } else sink.line(ENVELOPE.line(json));
  }
  const holding = sink.holding;
  const finished = await sink.finish();
  await next.commit(sent, false, options.unsure === true);
  return { records: out.records, sent: sink.sent, unchanged: sink.unchanged, finished, repeated: next.repeated, holding, holdingAfter: sink.holding };
}

const G = ['20261201T020000Z-00000001', '20261202T020000Z-00000002', '20261203T020000Z-00000003', '20261204T020000Z-00000004'];
const r = (id: string, progress: number) => `{"id":"${id}","progress":${progress}}`;

describe('ChangedRows', () => {
  it.each(['line', 'spliced', 'commit'] as const)('(%s) holds the rows of a key that came twice in the last run to the end of the reads, then sends its last row only if it changed: an unchanged dump sends nothing', async (path) => {
    const folder = tempFolder('changed-rows-');
    const dump = [r('u1', 5), r('u9', 10), r('u2', 7), r('u9', 20)];
    const first = await run(folder, dump, undefined, G[0], { path });
    expect(first.records).toEqual(dump);
    expect(first.repeated).toBe(1);
    const second = await run(folder, dump, G[0], G[1], { path });
    expect(second).toMatchObject({ records: [], sent: 0, unchanged: 4, finished: 0 });
    const changed = await run(folder, [r('u1', 5), r('u9', 10), r('u2', 7), r('u9', 30)], G[0], G[2], { path });
    expect(changed).toMatchObject({ records: [r('u9', 30)], sent: 1, unchanged: 3, finished: 1 });
  });

  it('says it is holding rows while a repeating key\'s rows wait for the end of the reads (no STATE checkpoint may then go out), and not once they went out or when nothing repeats', async () => {
    const folder = tempFolder('changed-rows-');
    const dump = [r('u1', 5), r('u9', 10), r('u9', 20)];
    expect(await run(folder, dump, undefined, G[0])).toMatchObject({ holding: false });
    expect(await run(folder, dump, G[0], G[1])).toMatchObject({ holding: true, holdingAfter: false });
    expect(await run(folder, [r('u1', 6)], G[1], G[2])).toMatchObject({ holding: false });
  });

  it('sends a key\'s later row in a run when it differs from what the target holds then (its earlier row, sent): the target ends with the last', async () => {
    const folder = tempFolder('changed-rows-');
    await run(folder, [r('u9', 20)], undefined, G[0]);
    const next = await run(folder, [r('u9', 10), r('u9', 20)], G[0], G[1]);
    expect(next.records).toEqual([r('u9', 10), r('u9', 20)]);
    expect(next.repeated).toBe(1);
    const after = await run(folder, [r('u9', 10), r('u9', 20)], G[1], G[2]);
    expect(after.records).toEqual([]);
  });

  it('once the rows held pass the limit, sends a repeating key\'s rows as they come, each compared with what the target holds then; a key already held stays held', async () => {
    const folder = tempFolder('changed-rows-');
    const dump = [r('a', 1), r('b', 1), r('a', 2), r('b', 2)];
    await run(folder, dump, undefined, G[0]);
    const tight = await run(folder, [r('a', 1), r('b', 1), r('a', 3), r('b', 3)], G[0], G[1], { heldMaxBytes: 1 });
    // `a` is held (the limit is passed only after it), `b` is not: its first row differs from the target's (b 2), and so does its second from that.
    expect(tight.records).toEqual([r('b', 1), r('b', 3), r('a', 3)]);
  });

  it('in a full pass on a face whose reader keeps either of a run\'s rows of a key (Airbyte), has the next run send the last row of a key sent twice, even one the store held unchanged', async () => {
    const folder = tempFolder('changed-rows-');
    await run(folder, [r('u9', 10)], undefined, G[0], { unsure: true });
    const pass = await run(folder, [r('u9', 10), r('u9', 20)], G[0], G[1], { all: true, unsure: true });
    expect(pass.records).toEqual([r('u9', 10), r('u9', 20)]);
    expect((await run(folder, [r('u9', 10), r('u9', 20)], G[1], G[2], { unsure: true })).records).toEqual([r('u9', 20)]);
    expect((await run(folder, [r('u9', 10), r('u9', 20)], G[2], G[3], { unsure: true })).records).toEqual([]);
  });
});

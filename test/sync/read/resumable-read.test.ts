import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { readDump, ResumeCursor, ResumeMismatchError, type BodyConsumer, type DumpOpener, type ReadHandlers } from '../../../src/sync/read/resumable-read.js';
import { PrefixHasher } from '../../../src/sync/read/resume-proof.js';
import { LineSplitter } from '../../../src/records/lines.js';
import { createLogger, type LogLevel, type Logger } from '../../../src/observe/log.js';
import { TRAINING } from '../../../src/catalog/reports.js';
import type { DumpRequest, DumpResponse, RetryBudget } from '../../../src/http/client.js';

const LM_1 = 'Wed, 01 May 2024 08:00:00 GMT';
const LM_2 = 'Wed, 01 May 2024 09:00:00 GMT';

const REQUEST: DumpRequest = {
  stream: TRAINING,
  format: 'jsonl',
  query: [['filter[completedAt]', '>=2024-05-01T00:00:00Z']],
  ifModifiedSince: LM_1,
};

/** One scripted answer: 304, or a 200 whose body yields `chunks` and then, with `breaks`, fails like a reset connection. */
type Script = { status: 304 } | { status: 200; lastModified?: string; chunks: string[]; breaks?: boolean };

/** A DumpOpener answering from a script, recording the requests, the back-offs and the aborted responses. */
class FakeOpener implements DumpOpener {
  readonly requests: DumpRequest[] = [];
  readonly backOffs: Array<{ streamName: string; failure: string; attempts: number }> = [];
  /** Index (0-based, in open order) of each response aborted. */
  readonly aborted: number[] = [];
  /** Like max_retries: backOff gives up once the budget has had more attempts. */
  maxRetries = Number.POSITIVE_INFINITY;
  private opened = 0;

  constructor(private readonly script: Script[]) {}

  open(request: DumpRequest, budget: RetryBudget): Promise<DumpResponse> {
    this.requests.push(request);
    budget.attempts++;
    const index = this.opened++;
    const next = this.script[index];
    if (!next) throw new Error(`unscripted request #${index + 1}`);
    if (next.status === 304) return Promise.resolve({ status: 304 });
    return Promise.resolve({
      status: 200,
      lastModified: next.lastModified,
      body: body(next.chunks, next.breaks ?? false),
      abort: () => void this.aborted.push(index),
      startedAt: 0,
    });
  }

  backOff(budget: RetryBudget, streamName: string, failure: string): Promise<void> {
    this.backOffs.push({ streamName, failure, attempts: budget.attempts });
    if (budget.attempts > this.maxRetries) return Promise.reject(new Error(`${streamName} dump: gave up after ${budget.attempts} attempts`));
    return Promise.resolve();
  }
}

async function* body(chunks: readonly string[], breaks: boolean): AsyncGenerator<Buffer> {
  for (const chunk of chunks) yield Buffer.from(chunk);
  if (breaks) throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
}

function collectingLogger(): { logger: Logger; logs: Array<{ level: LogLevel; message: string }> } {
  const logs: Array<{ level: LogLevel; message: string }> = [];
  return { logger: createLogger({ level: 'debug', sink: (level, message) => logs.push({ level, message }) }), logs };
}

/** Handlers whose consumer emits each fresh line (as the decoders do, through `resume.advance`) into `emitted`. */
function lineHandlers(): ReadHandlers & { emitted: string[]; attempts: number } {
  const emitted: string[] = [];
  const handlers = {
    emitted,
    attempts: 0,
    start(resume: ResumeCursor): BodyConsumer {
      handlers.attempts++;
      return new LineSplitter(
        1024,
        (buffer, start, end) => {
          if (resume.advance()) emitted.push(buffer.toString('utf8', start, end));
        },
        () => undefined,
      );
    },
    afterChunk: () => Promise.resolve(),
  };
  return handlers;
}

describe('readDump', () => {
  it('on HTTP 304 never starts a consumer and reports 304', async () => {
    const opener = new FakeOpener([{ status: 304 }]);
    const { logger, logs } = collectingLogger();
    let started = 0;
    const outcome = await readDump(opener, REQUEST, logger, {
      start: () => {
        started++;
        return { push: () => undefined, end: () => undefined };
      },
      afterChunk: () => Promise.resolve(),
    });
    expect(outcome).toEqual({ status: 304 });
    expect(started).toBe(0);
    expect(opener.requests).toEqual([REQUEST]);
    expect(logs).toEqual([{ level: 'info', message: `training: dump unchanged since ${LM_1} (HTTP 304); no records, bookmark kept` }]);
  });

  it('feeds every chunk of a complete body in order, reports each chunk’s bytes after it, ends the consumer and returns the Last-Modified', async () => {
    const opener = new FakeOpener([{ status: 200, lastModified: LM_1, chunks: ['a\nb', 'b\n', 'ü\n'] }]);
    const events: string[] = [];
    const outcome = await readDump(opener, REQUEST, collectingLogger().logger, {
      start: () => ({ push: (chunk) => void events.push(`push ${chunk.toString()}`), end: () => void events.push('end') }),
      afterChunk: (bytes) => {
        events.push(`after ${bytes}`);
        return Promise.resolve();
      },
    });
    expect(outcome).toEqual({ status: 200, lastModified: LM_1 });
    expect(events).toEqual(['push a\nb', 'after 3', 'push b\n', 'after 2', 'push ü\n', 'after 3', 'end']);
    expect(opener.backOffs).toEqual([]);
    expect(opener.aborted).toEqual([]);
  });

  it('aborts a body that breaks, backs off and requests the dump again without If-Modified-Since', async () => {
    const opener = new FakeOpener([
      { status: 200, lastModified: LM_1, chunks: ['a\n'], breaks: true },
      { status: 200, lastModified: LM_1, chunks: ['a\nb\n'] },
    ]);
    const handlers = lineHandlers();
    const outcome = await readDump(opener, REQUEST, collectingLogger().logger, handlers);
    expect(outcome).toEqual({ status: 200, lastModified: LM_1 });
    expect(opener.aborted).toEqual([0]);
    expect(opener.backOffs).toEqual([{ streamName: 'training', failure: 'the dump broke after 1 records (read ECONNRESET)', attempts: 1 }]);
    expect(opener.requests).toEqual([REQUEST, { ...REQUEST, ifModifiedSince: undefined }]);
    expect(handlers.attempts).toBe(2);
  });

  it('skips the records handled before the break once the dump proves to begin with the same bytes, and emits each record once', async () => {
    const opener = new FakeOpener([
      { status: 200, lastModified: LM_1, chunks: ['a\nb', '\nc\nd'], breaks: true },
      { status: 200, lastModified: LM_1, chunks: ['a\nb\nc\nd\ne\n'] },
    ]);
    const handlers = lineHandlers();
    const { logger, logs } = collectingLogger();
    await readDump(opener, REQUEST, logger, handlers);
    // `d` had no line break when the body broke: it was never handed out, so it is not skipped.
    expect(handlers.emitted).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(logs.filter((l) => l.level !== 'debug' && !l.message.startsWith('METRIC'))).toEqual([
      { level: 'info', message: 'training: skipping the 3 records already handled, once the dump proves to begin with the same bytes' },
    ]);
  });

  it('resumes whatever Last-Modified says: a changed or missing one does not matter when the bytes prove the same', async () => {
    for (const [first, second] of [[LM_1, LM_2], [undefined, undefined]]) {
      const opener = new FakeOpener([
        { status: 200, lastModified: first, chunks: ['a\nb\n'], breaks: true },
        { status: 200, lastModified: second, chunks: ['a\nb\nc\n'] },
      ]);
      const handlers = lineHandlers();
      const outcome = await readDump(opener, REQUEST, collectingLogger().logger, handlers);
      expect(outcome).toEqual({ status: 200, lastModified: second });
      expect(handlers.emitted).toEqual(['a', 'b', 'c']);
    }
  });

  it('reads from the start when two records swapped places across the break, under the same Last-Modified: none is lost', async () => {
    // The red-team case: the second read moves `c` before the resume point and `b` after it.
    const opener = new FakeOpener([
      { status: 200, lastModified: LM_1, chunks: ['a\nb\n'], breaks: true },
      { status: 200, lastModified: LM_1, chunks: ['a\nc\nb\nd\n'] },
      { status: 200, lastModified: LM_1, chunks: ['a\nc\nb\nd\n'] },
    ]);
    const handlers = lineHandlers();
    const { logger, logs } = collectingLogger();
    const outcome = await readDump(opener, REQUEST, logger, handlers);
    expect(outcome).toEqual({ status: 200, lastModified: LM_1 });
    expect(handlers.emitted).toEqual(['a', 'b', 'a', 'c', 'b', 'd']);
    expect(new Set(handlers.emitted)).toEqual(new Set(['a', 'b', 'c', 'd']));
    expect(opener.aborted).toEqual([0, 1]);
    expect(opener.backOffs).toHaveLength(1);
    expect(opener.requests.map((r) => r.ifModifiedSince)).toEqual([LM_1, undefined, undefined]);
    expect(logs.filter((l) => l.level === 'warn')).toEqual([
      { level: 'warn', message: 'training: the dump read again does not begin with the bytes already read; reading it from the start, records may repeat' },
    ]);
  });

  it('checks the proven prefix before decoding the chunk that completes it: a changed record right after it is never emitted early', async () => {
    const opener = new FakeOpener([
      { status: 200, chunks: ['a\nbb\n'], breaks: true },
      // Same length, other bytes, and more records in the same chunk.
      { status: 200, chunks: ['a\nBB\nc\nd\n'] },
      { status: 200, chunks: ['a\nBB\nc\nd\n'] },
    ]);
    const handlers = lineHandlers();
    await readDump(opener, REQUEST, collectingLogger().logger, handlers);
    expect(handlers.emitted).toEqual(['a', 'bb', 'a', 'BB', 'c', 'd']);
  });

  it('reads from the start when the dump read again is shorter than the part already read', async () => {
    const opener = new FakeOpener([
      { status: 200, chunks: ['a\nb\nc\n'], breaks: true },
      { status: 200, chunks: ['a\nb\n'] },
      { status: 200, chunks: ['a\nb\n'] },
    ]);
    const handlers = lineHandlers();
    const { logger, logs } = collectingLogger();
    await readDump(opener, REQUEST, logger, handlers);
    expect(handlers.emitted).toEqual(['a', 'b', 'c', 'a', 'b']);
    expect(logs.filter((l) => l.level === 'warn').map((l) => l.message)).toEqual([
      'training: the dump read again is shorter than the part already read; reading it from the start, records may repeat',
    ]);
  });

  it('returns the Last-Modified of the read that completed, also when an earlier read broke before any record', async () => {
    const opener = new FakeOpener([
      { status: 200, lastModified: LM_1, chunks: [], breaks: true },
      { status: 200, lastModified: LM_2, chunks: ['a\n'] },
    ]);
    const handlers = lineHandlers();
    const { logger, logs } = collectingLogger();
    const outcome = await readDump(opener, REQUEST, logger, handlers);
    expect(outcome).toEqual({ status: 200, lastModified: LM_2 });
    expect(handlers.emitted).toEqual(['a']);
    expect(logs.filter((l) => l.level === 'warn')).toEqual([]);
  });

  it('treats a body that ends without a line break as cut short: no last record from it, read again and resumed', async () => {
    const opener = new FakeOpener([
      { status: 200, chunks: ['a\nb\n{"partial'] },
      { status: 200, chunks: ['a\nb\n{"partial":1}\n'] },
    ]);
    const handlers = lineHandlers();
    await readDump(opener, REQUEST, collectingLogger().logger, handlers);
    expect(handlers.emitted).toEqual(['a', 'b', '{"partial":1}']);
    expect(opener.backOffs.map((b) => b.failure)).toEqual([
      'the dump broke after 2 records (it ends without a line break after its last line, so it was cut short; if the service never ends its dumps with one, set require_final_line_break to false)',
    ]);
  });

  it('accepts a last line without a line break when require_final_line_break is off', async () => {
    const opener = new FakeOpener([{ status: 200, chunks: ['a\nb'] }]);
    const handlers = lineHandlers();
    await readDump(opener, REQUEST, collectingLogger().logger, handlers, { requireFinalLineBreak: false });
    expect(handlers.emitted).toEqual(['a', 'b']);
    expect(opener.backOffs).toEqual([]);
  });

  it('refuses a body that starts like an HTML page, without records and without retrying', async () => {
    for (const page of ['<!DOCTYPE html>\n<html><body>Log in</body></html>\n', '\ufeff  <html>\n', '<?xml version="1.0"?>\n<error/>\n']) {
      const opener = new FakeOpener([{ status: 200, chunks: [page.slice(0, 3), page.slice(3)] }]);
      const handlers = lineHandlers();
      await expect(readDump(opener, REQUEST, collectingLogger().logger, handlers)).rejects.toThrow(
        'training dump: the body at /public/v1/report/training/dump.jsonl starts like an HTML or XML page, not a dump',
      );
      expect(handlers.emitted).toEqual([]);
      expect(opener.backOffs).toEqual([]);
    }
  });

  it('lets an error of the consumer itself propagate, aborting the response without retrying', async () => {
    const opener = new FakeOpener([{ status: 200, lastModified: LM_1, chunks: ['a\n', 'b\n'] }]);
    const failure = new Error('the consumer failed');
    let ended = false;
    const read = readDump(opener, REQUEST, collectingLogger().logger, {
      start: () => ({
        push: (chunk) => {
          if (chunk.toString() === 'b\n') throw failure;
        },
        end: () => void (ended = true),
      }),
      afterChunk: () => Promise.resolve(),
    });
    await expect(read).rejects.toBe(failure);
    expect(opener.aborted).toEqual([0]);
    expect(opener.backOffs).toEqual([]);
    expect(opener.requests).toHaveLength(1);
    expect(ended).toBe(false);
  });

  it('fails when the dump requested again answers 304', async () => {
    const opener = new FakeOpener([{ status: 200, lastModified: LM_1, chunks: ['a\n'], breaks: true }, { status: 304 }]);
    await expect(readDump(opener, REQUEST, collectingLogger().logger, lineHandlers())).rejects.toThrow('training dump: unexpected HTTP 304 when requesting the dump again');
  });

  it('renews the retry budget only after a read that got further than any before, not after one that read the same records again', async () => {
    const opener = new FakeOpener([
      { status: 200, lastModified: LM_1, chunks: [], breaks: true },
      { status: 200, lastModified: LM_1, chunks: ['a\n'], breaks: true },
      { status: 200, lastModified: LM_1, chunks: ['a\n'], breaks: true },
      { status: 200, lastModified: LM_1, chunks: ['a\nb\n'] },
    ]);
    const handlers = lineHandlers();
    await readDump(opener, REQUEST, collectingLogger().logger, handlers);
    expect(opener.backOffs.map((b) => b.attempts)).toEqual([1, 1, 2]);
    expect(handlers.emitted).toEqual(['a', 'b']);
  });

  it('a break that recurs at the same place in a dump whose order changes every time spends the budget instead of renewing it', async () => {
    const reads: Script[] = [];
    for (let i = 0; i < 6; i++) reads.push({ status: 200, chunks: [i % 2 === 0 ? 'a\nb\n' : 'b\na\n'], breaks: true });
    const opener = new FakeOpener(reads);
    opener.maxRetries = 3;
    const handlers = lineHandlers();
    await expect(readDump(opener, REQUEST, collectingLogger().logger, handlers)).rejects.toThrow('gave up');
    expect(opener.backOffs.map((b) => b.attempts)).toEqual([1, 3, 5]);
    // Never more than one copy of the dump per attempt.
    expect(handlers.emitted.length).toBeLessThanOrEqual(2 * opener.requests.length);
  });
});

describe('ResumeCursor and PrefixHasher', () => {
  const sha1 = (text: string): string => createHash('sha1').update(text).digest('base64url');

  it('hash the body up to its last line break, whatever the chunking', () => {
    const text = 'a\nbb\nccc\nddd';
    for (const cuts of [[], [1], [2, 3], [5, 6, 7, 8], [11]]) {
      const hasher = new PrefixHasher();
      let last = 0;
      for (const cut of [...cuts, text.length]) {
        hasher.push(Buffer.from(text.slice(last, cut)));
        last = cut;
      }
      expect([hasher.hashed, hasher.received, hasher.digest()], String(cuts)).toEqual([9, 12, sha1('a\nbb\nccc\n')]);
    }
  });

  it('on a first read call every record new, count what any read got to, and prove the prefix when it breaks', () => {
    const cursor = new ResumeCursor();
    cursor.chunk(Buffer.from('a\nb\nc'));
    expect([cursor.advance(), cursor.advance()]).toEqual([true, true]);
    expect([cursor.position, cursor.handled, cursor.furthest, cursor.resuming]).toEqual([2, 2, 2, false]);
    cursor.broke();
    expect([cursor.position, cursor.handled, cursor.resuming]).toEqual([0, 2, true]);
  });

  it('skip the handled records of a read whose prefix proves the same, split inside the chunk that completes it', () => {
    const cursor = new ResumeCursor();
    cursor.chunk(Buffer.from('a\nb\n'));
    cursor.advance();
    cursor.advance();
    cursor.broke();
    expect(() => cursor.chunk(Buffer.from('a\nb\nc\n'))).not.toThrow();
    expect([cursor.advance(), cursor.advance(), cursor.advance()]).toEqual([false, false, true]);
    expect(() => cursor.end()).not.toThrow();
    expect([cursor.handled, cursor.furthest]).toEqual([3, 3]);
  });

  it('refuse a read whose prefix differs in one byte, or ends early, or puts its line break elsewhere', () => {
    for (const [again, cuts] of [['a\nB\nc\n', [1]], ['a\nbX\n', [2]], ['ab\n\n', [4]]] as const) {
      const cursor = new ResumeCursor();
      cursor.chunk(Buffer.from('a\nb\n'));
      cursor.advance();
      cursor.advance();
      cursor.broke();
      expect(() => {
        cursor.chunk(Buffer.from(again.slice(0, cuts[0])));
        cursor.chunk(Buffer.from(again.slice(cuts[0])));
      }, again).toThrow(ResumeMismatchError);
    }
    const short = new ResumeCursor();
    short.chunk(Buffer.from('a\nb\n'));
    short.advance();
    short.broke();
    short.chunk(Buffer.from('a\n'));
    expect(() => short.end()).toThrow(ResumeMismatchError);
  });

  it('keep the earlier proof when a resumed read breaks before reaching it, and skip nothing after a mismatch', () => {
    const cursor = new ResumeCursor();
    cursor.chunk(Buffer.from('a\nb\nc\n'));
    cursor.advance();
    cursor.advance();
    cursor.advance();
    cursor.broke();
    cursor.chunk(Buffer.from('a\n'));
    expect(cursor.advance()).toBe(false);
    cursor.broke();
    expect([cursor.handled, cursor.resuming]).toEqual([3, true]);
    cursor.chunk(Buffer.from('a\nb\nc\nd\n'));
    expect([cursor.advance(), cursor.advance(), cursor.advance(), cursor.advance()]).toEqual([false, false, false, true]);
    cursor.mismatched();
    expect([cursor.position, cursor.handled, cursor.resuming, cursor.furthest]).toEqual([0, 0, false, 4]);
    expect(cursor.advance()).toBe(true);
  });
});

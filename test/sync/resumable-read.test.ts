import { describe, expect, it } from 'vitest';
import { readDump, ResumeCursor, ResumeMismatchError, type BodyConsumer, type DumpOpener, type ReadHandlers } from '../../src/sync/resumable-read.js';
import { LineSplitter } from '../../src/records/lines.js';
import { createLogger, type LogLevel, type Logger } from '../../src/observe/log.js';
import { TRAINING } from '../../src/catalog/reports.js';
import type { DumpRequest, DumpResponse, RetryBudget } from '../../src/http/client.js';

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
        (text, line, buffer, start, end) => {
          if (resume.advance(buffer, start, end, line)) emitted.push(text);
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

  it('with the same Last-Modified, skips the records handled before the break and emits each record once', async () => {
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
      { level: 'info', message: `training: dump unchanged (Last-Modified ${LM_1}); skipping the 3 records already handled` },
    ]);
  });

  it('with a different Last-Modified, reads again from the start and warns that records may repeat', async () => {
    const opener = new FakeOpener([
      { status: 200, lastModified: LM_1, chunks: ['a\nb\n'], breaks: true },
      { status: 200, lastModified: LM_2, chunks: ['a\nB\nc\n'] },
    ]);
    const handlers = lineHandlers();
    const { logger, logs } = collectingLogger();
    const outcome = await readDump(opener, REQUEST, logger, handlers);
    expect(outcome).toEqual({ status: 200, lastModified: LM_2 });
    expect(handlers.emitted).toEqual(['a', 'b', 'a', 'B', 'c']);
    expect(logs.filter((l) => l.level === 'warn')).toEqual([
      { level: 'warn', message: `training: the dump changed while being read (Last-Modified ${LM_1} -> ${LM_2}); reading it again from the start, records may repeat` },
    ]);
  });

  it('after reading a changed dump from the start, resumes a later break against the new Last-Modified', async () => {
    const opener = new FakeOpener([
      { status: 200, lastModified: LM_1, chunks: ['a\nb\n'], breaks: true },
      { status: 200, lastModified: LM_2, chunks: ['a\nB\n'], breaks: true },
      { status: 200, lastModified: LM_2, chunks: ['a\nB\nc\n'] },
    ]);
    const handlers = lineHandlers();
    const { logger, logs } = collectingLogger();
    const outcome = await readDump(opener, REQUEST, logger, handlers);
    expect(outcome).toEqual({ status: 200, lastModified: LM_2 });
    expect(handlers.emitted).toEqual(['a', 'b', 'a', 'B', 'c']);
    expect(logs.filter((l) => l.level === 'warn')).toHaveLength(1);
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

  it('without a Last-Modified on either read, reads again from the start', async () => {
    const opener = new FakeOpener([
      { status: 200, chunks: ['a\nb\n'], breaks: true },
      { status: 200, chunks: ['a\nb\nc\n'] },
    ]);
    const handlers = lineHandlers();
    await readDump(opener, REQUEST, collectingLogger().logger, handlers);
    expect(handlers.emitted).toEqual(['a', 'b', 'a', 'b', 'c']);
  });

  it('when the dump read again does not line up, aborts and reads it from the start, without backing off', async () => {
    const opener = new FakeOpener([
      { status: 200, lastModified: LM_1, chunks: ['a\nb\n'], breaks: true },
      { status: 200, lastModified: LM_1, chunks: ['a\nX\nc\n'] },
      { status: 200, lastModified: LM_1, chunks: ['a\nX\nc\n'] },
    ]);
    const handlers = lineHandlers();
    const { logger, logs } = collectingLogger();
    const outcome = await readDump(opener, REQUEST, logger, handlers);
    expect(outcome).toEqual({ status: 200, lastModified: LM_1 });
    expect(handlers.emitted).toEqual(['a', 'b', 'a', 'X', 'c']);
    expect(opener.aborted).toEqual([0, 1]);
    expect(opener.backOffs).toHaveLength(1);
    expect(opener.requests.map((r) => r.ifModifiedSince)).toEqual([LM_1, undefined, undefined]);
    expect(logs.filter((l) => l.level === 'warn')).toEqual([
      { level: 'warn', message: 'training: the dump read again did not line up with the first read; reading it from the start, records may repeat' },
    ]);
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

  it('renews the retry budget after a broken read that handled new records, not after one that did not', async () => {
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
});

describe('ResumeCursor', () => {
  const bytes = (text: string): Buffer => Buffer.from(text);

  it('on a first read calls every record new and counts it as handled', () => {
    const cursor = new ResumeCursor();
    const body = bytes('a\nbb\n');
    expect(cursor.advance(body, 0, 1, 1)).toBe(true);
    expect(cursor.advance(body, 2, 4, 2)).toBe(true);
    expect([cursor.position, cursor.handled]).toEqual([2, 2]);
  });

  it('on a read of the same dump skips the handled records, then calls the next ones new', () => {
    const cursor = new ResumeCursor();
    cursor.advance(bytes('a'), 0, 1, 1);
    cursor.advance(bytes('b'), 0, 1, 2);
    cursor.restart(true);
    expect([cursor.position, cursor.handled]).toEqual([0, 2]);
    // The same bytes at another offset of another buffer line up.
    const again = bytes('a\nb\nc\n');
    expect(cursor.advance(again, 0, 1, 1)).toBe(false);
    expect(cursor.advance(again, 2, 3, 2)).toBe(false);
    expect(cursor.advance(again, 4, 5, 3)).toBe(true);
    expect([cursor.position, cursor.handled]).toEqual([3, 3]);
  });

  it('throws ResumeMismatchError when the last handled record has other bytes, but compares only that one', () => {
    const cursor = new ResumeCursor();
    cursor.advance(bytes('a'), 0, 1, 1);
    cursor.advance(bytes('b'), 0, 1, 2);
    cursor.restart(true);
    expect(cursor.advance(bytes('changed'), 0, 7, 1)).toBe(false);
    expect(() => cursor.advance(bytes('B'), 0, 1, 2)).toThrow(ResumeMismatchError);
  });

  it('lines up an invalid line (no bytes) by its line number', () => {
    const cursor = new ResumeCursor();
    cursor.advance(undefined, 0, 0, 7);
    cursor.restart(true);
    expect(cursor.advance(undefined, 0, 0, 7)).toBe(false);

    cursor.restart(true);
    expect(() => cursor.advance(undefined, 0, 0, 8)).toThrow(ResumeMismatchError);
    cursor.restart(true);
    expect(() => cursor.advance(bytes('x'), 0, 1, 7)).toThrow(ResumeMismatchError);
  });

  it('after a restart of another dump calls every record new again', () => {
    const cursor = new ResumeCursor();
    cursor.advance(bytes('a'), 0, 1, 1);
    cursor.advance(bytes('b'), 0, 1, 2);
    cursor.restart(false);
    expect([cursor.position, cursor.handled]).toEqual([0, 0]);
    expect(cursor.advance(bytes('X'), 0, 1, 1)).toBe(true);
    expect([cursor.position, cursor.handled]).toEqual([1, 1]);
  });
});

import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { OutputClosedError } from '../../src/errors.js';
import { MessageWriter } from '../../src/output/writer.js';

function collect(out: PassThrough): () => string {
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(Buffer.from(c)));
  return () => Buffer.concat(chunks).toString('utf8');
}

describe('the message writer', () => {
  it('queues lines, spliced records and records built in its block, in order', async () => {
    const out = new PassThrough();
    const text = collect(out);
    const writer = new MessageWriter(out);
    writer.line('{"type":"SCHEMA"}');
    writer.spliced(Buffer.from('<'), Buffer.from('xxABCxx'), 2, 5, Buffer.from('>\n'));
    const block = writer.reserve(16);
    const start = writer.pos;
    const end = start + block.write('built\n', start);
    writer.commit(end);
    const dropped = writer.reserve(16);
    dropped.write('not committed\n', writer.pos);
    writer.line('last');
    await writer.end();
    expect(text()).toBe('{"type":"SCHEMA"}\n<ABC>\nbuilt\nlast\n');
  });

  it('says it flushed only once the destination took the last write, which drain does not wait for when the write fits its buffer', async () => {
    const done: Array<() => void> = [];
    const taken: string[] = [];
    const out = new Writable({
      highWaterMark: 16 * 1024,
      write(chunk: Buffer, _encoding, callback) {
        taken.push(chunk.toString('utf8'));
        done.push(() => callback());
      },
    });
    const writer = new MessageWriter(out);
    writer.line('the last record of a pass');
    await writer.drain();
    // drain() returned: the small write is in the stream, not yet taken by the destination.
    expect(out.writableLength).toBeGreaterThan(0);
    let flushed = false;
    const flushing = writer.flushed().then(() => (flushed = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(flushed).toBe(false);
    while (done.length > 0) done.shift()!();
    await flushing;
    expect(flushed).toBe(true);
    expect(taken.join('')).toBe('the last record of a pass\n');
  });

  it('once sealed, sends its last lines after what it queued and nothing after them: later lines and chunks are dropped, a message delivered meanwhile is told it did not go out', async () => {
    const out = new PassThrough();
    const text = collect(out);
    const writer = new MessageWriter(out);
    writer.line('{"type":"RECORD","n":1}');
    writer.seal(['{"type":"TRACE","status":"INCOMPLETE"}']);
    expect(writer.broken).toBe(true);
    writer.line('{"type":"RECORD","n":2}');
    writer.message('{"type":"STATE"}');
    let passedBack = false;
    writer.pass(Buffer.from('{"type":"RECORD","n":3}\n'), () => (passedBack = true));
    const delivered = await writer.deliver('{"type":"BATCH"}');
    await writer.end();
    await writer.flushed();
    expect(text()).toBe('{"type":"RECORD","n":1}\n{"type":"TRACE","status":"INCOMPLETE"}\n');
    expect(passedBack).toBe(true);
    expect(delivered).toBe(false);
  });

  it('sends a line that is not a record at once, with the records queued before it; records alone wait for their block to fill', () => {
    const out = new PassThrough();
    const text = collect(out);
    const writer = new MessageWriter(out);
    writer.line('{"type":"RECORD","n":1}');
    expect(text()).toBe('');
    writer.message('{"type":"TRACE","status":"STARTED"}');
    expect(text()).toBe('{"type":"RECORD","n":1}\n{"type":"TRACE","status":"STARTED"}\n');
    writer.line('{"type":"RECORD","n":2}');
    expect(text()).toBe('{"type":"RECORD","n":1}\n{"type":"TRACE","status":"STARTED"}\n');
  });

  it('a burst of messages while the destination holds every write pins about their own size, not a block each, and shows as backpressure', () => {
    // The first write never ends: the stream keeps every later chunk, and with it the memory each one holds.
    const out = new Writable({ highWaterMark: 16 * 1024, write: () => undefined });
    const writer = new MessageWriter(out);
    const before = process.memoryUsage().arrayBuffers;
    for (let i = 0; i < 200; i++) writer.message(`{"type":"LOG","log":{"level":"DEBUG","message":"line ${i} ${'x'.repeat(80)}"}}`);
    // 200 blocks would be 50 MiB.
    expect(process.memoryUsage().arrayBuffers - before, 'bytes the queued writes hold').toBeLessThan(4 * 1024 * 1024);
    expect(out.writableLength).toBeGreaterThan(200 * 100);
    expect(writer.full).toBe(true);
  });

  it('refuses to commit a line when other output came between its reserve and its commit (a log line would be overwritten, or already sent)', () => {
    const writer = new MessageWriter(new PassThrough());
    const block = writer.reserve(64);
    const end = writer.pos + block.write('{"n":1}\n', writer.pos);
    writer.message('{"type":"LOG"}');
    expect(() => writer.commit(end)).toThrow(/after other output since reserve/);
    const again = writer.reserve(64);
    expect(() => writer.commit(writer.pos + again.write('{"n":2}\n', writer.pos))).not.toThrow();
  });

  it('refuses to commit outside the reserved block', () => {
    const writer = new MessageWriter(new PassThrough());
    writer.line('x');
    expect(() => writer.commit(0)).toThrow(RangeError);
    expect(() => writer.commit(writer.reserve(8).length + 1)).toThrow(RangeError);
  });

  it('says it is full once the destination pushes back, and drain() waits until the destination took everything', async () => {
    let release: (() => void) | undefined;
    const written: number[] = [];
    const slow = new Writable({
      highWaterMark: 1024,
      write(chunk: Buffer, _encoding, done) {
        written.push(chunk.length);
        release = done;
      },
    });
    const writer = new MessageWriter(slow);
    for (let i = 0; i < 20_000; i++) writer.line('x'.repeat(40));
    let drained = false;
    const drain = writer.drain().then(() => (drained = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(writer.full).toBe(true);
    expect(drained).toBe(false);
    while (!drained) {
      release?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await drain;
    expect(written.reduce((a, b) => a + b, 0)).toBe(20_000 * 41);
  });

  it('passes a chunk of whole lines on as it is (the same buffer, no copy), after what it had queued, and says when the destination pushes back', async () => {
    const chunks: Buffer[] = [];
    const out = new Writable({
      highWaterMark: 64,
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk);
        setImmediate(done);
      },
    });
    const writer = new MessageWriter(out);
    writer.line('{"type":"ACTIVATE_VERSION"}');
    const chunk = Buffer.from('{"n":1}\n{"n":2}\n'.repeat(8));
    writer.pass(chunk);
    expect(writer.full).toBe(true);
    await writer.drain();
    expect(writer.full).toBe(false);
    expect(chunks.map((c) => c.toString())).toEqual(['{"type":"ACTIVATE_VERSION"}\n', chunk.toString()]);
    expect(chunks[1]).toBe(chunk);
  });

  it('says when the destination is done with a passed chunk (its buffer may be used again), and at once when the writer has failed', async () => {
    const taken: Array<() => void> = [];
    const out = new Writable({
      write(_chunk: Buffer, _encoding, done) {
        taken.push(done);
      },
    });
    const writer = new MessageWriter(out);
    let reusable = 0;
    writer.pass(Buffer.from('{"n":1}\n'), () => reusable++);
    await new Promise((resolve) => setImmediate(resolve));
    expect(reusable, 'the destination still holds it').toBe(0);
    taken.shift()!();
    await new Promise((resolve) => setImmediate(resolve));
    expect(reusable).toBe(1);

    const closed = new PassThrough();
    const failed = new MessageWriter(closed);
    closed.destroy(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    await new Promise((resolve) => setImmediate(resolve));
    failed.line('x');
    await expect(failed.drain()).rejects.toThrow(/EPIPE/);
    failed.pass(Buffer.from('y\n'), () => reusable++);
    expect(reusable, 'a failed writer takes nothing: the buffer is free at once').toBe(2);
  });

  it('delivers a line in a write of its own, once the destination took every earlier write, and says whether it took that one', async () => {
    const writes: Array<{ text: string; done: (error?: Error) => void }> = [];
    const out = new Writable({
      write(chunk: Buffer, _encoding, done) {
        // An empty write only marks a point in the stream (MessageWriter.flushed): taken at once.
        if (chunk.length === 0) done();
        else writes.push({ text: chunk.toString('utf8'), done });
      },
    });
    out.on('error', () => undefined);
    const writer = new MessageWriter(out);
    const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
    writer.message('{"type":"SCHEMA"}');
    writer.message('{"type":"ACTIVATE_VERSION"}');
    const first = writer.deliver('{"type":"BATCH","n":1}');
    await tick();
    expect(writes.map((w) => w.text), 'the line waits while an earlier write is not taken').toEqual(['{"type":"SCHEMA"}\n']);
    writes[0]!.done();
    await tick();
    writes[1]!.done();
    await tick();
    expect(writes.map((w) => w.text)).toEqual(['{"type":"SCHEMA"}\n', '{"type":"ACTIVATE_VERSION"}\n', '{"type":"BATCH","n":1}\n']);
    writes[2]!.done();
    expect(await first).toBe(true);

    const second = writer.deliver('{"type":"BATCH","n":2}');
    await tick();
    expect(writes.at(-1)!.text).toBe('{"type":"BATCH","n":2}\n');
    writes.at(-1)!.done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    expect(await second, 'the reader closed before the write was taken').toBe(false);
    expect(await writer.deliver('{"type":"BATCH","n":3}'), 'a failed destination takes nothing more').toBe(false);
    expect(writes).toHaveLength(4);
  });

  it('hands the destination blocks of the size it was given, each of whole lines, and a line larger than that in one piece', async () => {
    const chunks: Buffer[] = [];
    const out = new PassThrough();
    out.on('data', (c: Buffer) => chunks.push(Buffer.from(c)));
    const writer = new MessageWriter(out, undefined, 100);
    for (let i = 0; i < 20; i++) writer.line(`{"n":${String(i).padStart(2, '0')}}`);
    writer.line('x'.repeat(250));
    writer.line('last');
    await writer.end();
    // A line is given room for 3 bytes a character: nine lines of 9 bytes fill a 100-byte block; the long line gets a block of its own size, which the last line shares.
    expect(chunks.map((c) => c.length)).toEqual([81, 81, 18, 256]);
    expect(chunks.every((c) => c.at(-1) === 10)).toBe(true);
  });

  it('reuses its blocks however many the destination queues, so steady output allocates nothing', async () => {
    // A block is a range of an ArrayBuffer (small ones share Node's buffer pool).
    const blocks = new Map<ArrayBufferLike, Set<number>>();
    const out = new Writable({
      highWaterMark: 10_000,
      write(chunk: Buffer, _encoding, done) {
        blocks.set(chunk.buffer, (blocks.get(chunk.buffer) ?? new Set()).add(chunk.byteOffset));
        setImmediate(done);
      },
    });
    const writer = new MessageWriter(out, undefined, 1000);
    for (let i = 0; i < 50_000; i++) {
      writer.line('{"n":123}');
      if (writer.full) await writer.drain();
    }
    await writer.end();
    const count = [...blocks.values()].reduce((sum, offsets) => sum + offsets.size, 0);
    // Eleven blocks queued at most (10,000 bytes), one being filled, and a spare.
    expect(count).toBeLessThanOrEqual(14);
  });

  it('lets go of its blocks, and takes lines again in blocks of its size', async () => {
    const chunks: Buffer[] = [];
    const out = new PassThrough();
    out.on('data', (c: Buffer) => chunks.push(Buffer.from(c)));
    const writer = new MessageWriter(out, undefined, 100);
    writer.line('first');
    await writer.end();
    writer.release();
    for (let i = 0; i < 20; i++) writer.line(`{"n":${String(i).padStart(2, '0')}}`);
    await writer.end();
    expect(chunks.map((c) => c.length)).toEqual([6, 81, 81, 18]);
  });

  it('turns a closed destination into one clear error', async () => {
    const out = new PassThrough();
    const writer = new MessageWriter(out);
    out.destroy(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    await new Promise((resolve) => setImmediate(resolve));
    writer.line('x');
    await expect(writer.drain()).rejects.toThrow(/Cannot write to stdout \(EPIPE\): the consumer closed the pipe/);
    writer.pass(Buffer.from('y\n'));
    expect(writer.full).toBe(true);
    await expect(writer.drain()).rejects.toThrow(/Cannot write to stdout \(EPIPE\)/);
  });

  it('says after how many records stdout closed, counting records and not other messages, with exit code 3', async () => {
    const out = new PassThrough();
    const writer = new MessageWriter(out);
    writer.message('{"type":"SCHEMA"}');
    writer.line('{"type":"RECORD","n":1}');
    const block = writer.reserve(16);
    writer.commit(writer.pos + block.write('{"n":2}', writer.pos));
    writer.pass(Buffer.from('{"n":3}\n{"n":4}\n'), undefined, 2);
    writer.countRecords(10);
    out.destroy(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    await new Promise((resolve) => setImmediate(resolve));
    const error = await writer.drain().then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(OutputClosedError);
    expect((error as OutputClosedError).exitCode).toBe(3);
    expect((error as Error).message).toMatch(/the consumer closed the pipe after 14 records; the run stopped and the state was not advanced/);
  });
});

describe('records written (what a stop may say went out)', () => {
  it('counts only records whose bytes the destination has taken: none while they wait in the block, all once their write is done', async () => {
    const taken: Array<() => void> = [];
    const out = new Writable({ highWaterMark: 1 << 20, write: (_chunk, _encoding, done) => void taken.push(done) });
    const writer = new MessageWriter(out);
    writer.line('{"a":1}');
    writer.line('{"a":2}');
    expect([writer.records, writer.written]).toEqual([2, 0]);
    // A line that is not a record goes out at once, with the records before it.
    writer.message('{"type":"STATE"}');
    writer.line('{"a":3}');
    await new Promise((resolve) => setImmediate(resolve));
    expect([writer.written, writer.handed], 'handed over, not yet taken').toEqual([0, 2]);
    taken.shift()!();
    await new Promise((resolve) => setImmediate(resolve));
    expect([writer.records, writer.written]).toEqual([3, 2]);
    writer.countRecords(5);
    expect(writer.written, 'records of an announced batch file').toBe(7);
  });
});

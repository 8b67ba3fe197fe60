/**
 * The strong baseline: what a careful, straightforward Node tap does, without
 * the tap's byte-level tricks. Lines are split on bytes (Buffer indexOf over
 * each chunk, the partial last line carried into the next), each is parsed
 * with JSON.parse, wrapped in a RECORD envelope and re-serialised with
 * JSON.stringify; the max replication-key instant is tracked; output is
 * written in 64 KiB batches, waiting for 'drain' when stdout is full.
 * Usage: node strong.js URL TOKEN STREAM REPLICATION_KEY [gzip]
 */
import { once } from 'node:events';
import { dumpBody } from './dump-body.js';

const BATCH_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

const [url, token, stream, key, gzip] = process.argv.slice(2);
const input = await dumpBody('strong', url, token, gzip);

const timeExtracted = new Date().toISOString();
let max = Number.NEGATIVE_INFINITY;
let maxValue: string | null = null;
let count = 0;
/**
 * Messages are encoded into a 64 KiB buffer as they are made: a 64 KiB string
 * batch would be two-byte as soon as one record has a non-Latin-1 character,
 * and at 128 KiB V8 allocates (and frees) every batch in its own memory mapping.
 */
let batch = Buffer.allocUnsafe(BATCH_BYTES);
let used = 0;
/** Full batches, waiting to be written. */
let pending: Buffer[] = [];

/** One line's bytes (without its newline) to a RECORD message appended to the batch. */
function record(bytes: Buffer, start: number, end: number): void {
  if (end > start && bytes[end - 1] === 0x0d) end--;
  if (end === start) return;
  const parsed = JSON.parse(bytes.toString('utf8', start, end)) as Record<string, unknown>;
  const value = parsed[key];
  if (typeof value === 'string') {
    const time = Date.parse(value);
    if (time > max) {
      max = time;
      maxValue = value;
    }
  }
  append(`${JSON.stringify({ type: 'RECORD', stream, record: parsed, time_extracted: timeExtracted })}\n`);
  count++;
}

/** Adds a message to the batch; a message that may not fit starts a new batch (the full one is queued for writing). */
function append(message: string): void {
  if (used + message.length * 3 > BATCH_BYTES) {
    pending.push(batch.subarray(0, used));
    batch = Buffer.allocUnsafe(Math.max(BATCH_BYTES, message.length * 3));
    used = 0;
  }
  used += batch.write(message, used);
}

async function flush(): Promise<void> {
  const full = pending;
  pending = [];
  for (const buffer of full) if (!process.stdout.write(buffer)) await once(process.stdout, 'drain');
}

let tail: Buffer | null = null;
for await (const chunk of input as AsyncIterable<Buffer>) {
  let start = 0;
  let nl = chunk.indexOf(NEWLINE);
  if (tail !== null && nl >= 0) {
    // Only the line that straddles two chunks is copied.
    const line = Buffer.concat([tail, chunk.subarray(0, nl)]);
    record(line, 0, line.length);
    tail = null;
    start = nl + 1;
    nl = chunk.indexOf(NEWLINE, start);
  }
  for (; nl >= 0; nl = chunk.indexOf(NEWLINE, start)) {
    record(chunk, start, nl);
    start = nl + 1;
    if (pending.length > 0) await flush();
  }
  if (start < chunk.length) tail = tail === null ? chunk.subarray(start) : Buffer.concat([tail, chunk.subarray(start)]);
}
if (tail !== null) record(tail, 0, tail.length);
append(`${JSON.stringify({ type: 'STATE', value: { bookmarks: { [stream]: { replication_key_value: maxValue } } } })}\n`);
pending.push(batch.subarray(0, used));
await flush();
process.stderr.write(`strong: ${count} records\n`);

/**
 * The naive pipeline the tap is measured against: what a straightforward Node
 * tap does. readline splits the body into lines, each is parsed with
 * JSON.parse, wrapped in a RECORD envelope and re-serialised with
 * JSON.stringify, written with backpressure; the max date is tracked.
 * Usage: node naive.js URL TOKEN STREAM REPLICATION_KEY
 */
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { dumpBody } from './dump-body.js';

const [url, token, stream, key, gzip] = process.argv.slice(2);
const input = await dumpBody('naive', url, token, gzip);

const timeExtracted = new Date().toISOString();
let max = Number.NEGATIVE_INFINITY;
let maxValue: string | null = null;
let count = 0;
for await (const line of createInterface({ input, crlfDelay: Infinity })) {
  if (line === '') continue;
  const record = JSON.parse(line) as Record<string, unknown>;
  const value = record[key];
  if (typeof value === 'string') {
    const time = Date.parse(value);
    if (time > max) {
      max = time;
      maxValue = value;
    }
  }
  const message = JSON.stringify({ type: 'RECORD', stream, record, time_extracted: timeExtracted });
  if (!process.stdout.write(`${message}\n`)) await once(process.stdout, 'drain');
  count++;
}
process.stdout.write(`${JSON.stringify({ type: 'STATE', value: { bookmarks: { [stream]: { replication_key_value: maxValue } } } })}\n`);
process.stderr.write(`naive: ${count} records\n`);

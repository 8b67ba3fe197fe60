import { describe, expect, it } from 'vitest';
import { MessageTally } from '../../src/bin/demo-tally.js';

const MESSAGES = [
  '{"type":"SCHEMA","stream":"training","schema":{},"key_properties":["userId"]}',
  '{"type":"RECORD","stream":"training","record":{"userId":"u1","name":"Søren"},"time_extracted":"2026-01-01T00:00:00.000Z"}',
  '{"type":"RECORD","stream":"training","record":{"userId":"u2","name":"Zoë"},"time_extracted":"2026-01-01T00:00:00.000Z"}',
  '{"type":"STATE","value":{"bookmarks":{"training":{"replication_key_value":"2025-01-01T00:00:00Z"}}}}',
  '{"type":"SCHEMA","stream":"phishing","schema":{},"key_properties":["userId"]}',
  '{"type":"RECORD","stream":"phishing","record":{"userId":"u1","note":"{\\"type\\":\\"RECORD\\",\\"stream\\":\\"training\\"}"}}',
  '{"type":"STATE","value":{"bookmarks":{}}}',
];
const TEXT = `${MESSAGES.join('\n')}\n`;

/** Writes `bytes` in pieces of `size` bytes (lines and UTF-8 characters cut anywhere), reusing one buffer as the tap's writer reuses its blocks. */
async function tallyOf(bytes: Buffer, size: number): Promise<MessageTally> {
  const tally = new MessageTally();
  const block = Buffer.alloc(size);
  for (let at = 0; at < bytes.length; at += size) {
    const length = bytes.copy(block, 0, at, at + size);
    await new Promise<void>((resolve, reject) => tally.write(block.subarray(0, length), (error) => (error ? reject(error) : resolve())));
  }
  await new Promise<void>((resolve) => tally.end(resolve));
  return tally;
}

describe('the demo\'s message tally', () => {
  it.each([1, 7, 64, TEXT.length * 2])('counts each stream\'s RECORD messages and keeps its first line as written, in writes of %i bytes', async (size) => {
    const tally = await tallyOf(Buffer.from(TEXT), size);
    expect(tally.streams()).toEqual([
      { stream: 'training', records: 2, sample: MESSAGES[1] },
      { stream: 'phishing', records: 1, sample: MESSAGES[5] },
    ]);
  });

  it('counts every message and every byte that passed', async () => {
    const tally = await tallyOf(Buffer.from(TEXT), 100);
    expect([tally.messages, tally.bytes]).toEqual([MESSAGES.length, Buffer.byteLength(TEXT)]);
  });

  it('counts a last line without a newline once the output ends', async () => {
    const tally = await tallyOf(Buffer.from(MESSAGES.slice(0, 3).join('\n')), 50);
    expect(tally.streams()).toEqual([{ stream: 'training', records: 2, sample: MESSAGES[1] }]);
    expect(tally.messages).toBe(3);
  });
});

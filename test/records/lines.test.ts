import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../../src/records/lines.js';
import { Utf8Validator } from '../../src/records/utf8.js';
import { seeded } from '../helpers/random.js';

function split(chunks: Buffer[], max = 1024, end = true) {
  const lines: Array<[number, string]> = [];
  const invalid: Array<[number, string]> = [];
  const splitter = new LineSplitter(max, (buffer, start, end, n) => lines.push([n, buffer.toString('utf8', start, end)]), (e, n) => invalid.push([n, e.message]));
  for (const c of chunks) splitter.push(c);
  if (end) splitter.end();
  return { lines, invalid };
}

describe('splitting a byte stream into lines', () => {
  it('joins lines and multi-byte characters split across chunks, strips CR and skips blank lines', () => {
    const text = Buffer.from('{"a":"Zoë"}\r\n\n{"b":"小林"}\n{"c":1}');
    const chunks = [...text].map((_, i) => text.subarray(i, i + 1));
    expect(split(chunks).lines).toEqual([[1, '{"a":"Zoë"}'], [3, '{"b":"小林"}'], [4, '{"c":1}']]);
  });

  it('drops a UTF-8 byte order mark before the first line, even split across chunks', () => {
    const text = Buffer.from('\uFEFF{"a":1}\n{"b":2}\n');
    expect(split([text.subarray(0, 2), text.subarray(2)]).lines).toEqual([[1, '{"a":1}'], [2, '{"b":2}']]);
    expect(split([Buffer.from('{"a":"\uFEFF"}\n')]).lines).toEqual([[1, '{"a":"\uFEFF"}']]);
  });

  it('never hands out a partial last line when the body did not end cleanly', () => {
    expect(split([Buffer.from('{"a":1}\n{"b":')], 1024, false).lines).toEqual([[1, '{"a":1}']]);
  });

  it('reports invalid UTF-8 and over-long lines with their line numbers, and goes on', () => {
    const bad = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}\n')]);
    const long = Buffer.from(`{"x":"${'y'.repeat(3000)}"}\n`);
    const { lines, invalid } = split([bad, long.subarray(0, 1500), long.subarray(1500), Buffer.from('{"ok":"\uFFFD"}\n')]);
    expect(invalid).toEqual([[1, 'line is not valid UTF-8'], [2, 'line is longer than max_line_bytes (1024)']]);
    expect(lines).toEqual([[3, '{"ok":"\uFFFD"}']]);
  });

  it('rejects only the line with a bad byte when good lines share its chunk, or when the bad byte straddles two chunks', () => {
    const chunk = Buffer.concat([Buffer.from('{"a":"é"}\n{"b":"'), Buffer.from([0xc3]), Buffer.from('"}\n{"c":"小"}\n{"d":"')]);
    const { lines, invalid } = split([chunk, Buffer.from([0xe5]), Buffer.from('"}\n{"e":1}\n')]);
    expect(invalid).toEqual([[2, 'line is not valid UTF-8'], [4, 'line is not valid UTF-8']]);
    expect(lines).toEqual([[1, '{"a":"é"}'], [3, '{"c":"小"}'], [5, '{"e":1}']]);
  });
});

describe('a reader that finds each line end as it reads the line', () => {
  it('gets the same lines as the search for line breaks, whatever it reads and wherever the chunks are cut; the splitter searches where it declines', () => {
    const random = seeded(8);
    const text = Buffer.from('{"a":1}\r\n\n{"b":"Zoë"}\nnot json\n{"c":"小"}  \n{"d":\n2}\n\uFEFF{"e":1}\n{"f":1}');
    const reads: number[] = [];
    // Reads only lines that start with `{"` and end with their first `}`, as a scanner of some shape would.
    const reader = (buffer: Buffer, start: number, limit: number): number => {
      reads.push(start);
      if (buffer[start] !== 0x7b || buffer[start + 1] !== 0x22) return -1;
      const lineFeed = buffer.indexOf(10, start);
      return lineFeed !== -1 && lineFeed < limit && buffer.indexOf(0x7d, start) === lineFeed - 1 ? lineFeed : -1;
    };
    for (let round = 0; round < 50; round++) {
      const cuts = [0, ...Array.from({ length: 4 }, () => Math.floor(random() * text.length)).sort((a, b) => a - b), text.length];
      const chunks = cuts.slice(1).map((cut, i) => text.subarray(cuts[i], cut));
      const lines: Array<[number, string]> = [];
      const splitter = new LineSplitter(1024, (buffer, start, end, n) => lines.push([n, buffer.toString('utf8', start, end)]), () => undefined, reader);
      for (const chunk of chunks) splitter.push(chunk);
      splitter.end();
      expect(lines).toEqual(split(chunks).lines);
    }
    expect(reads.length).toBeGreaterThan(100);
  });
});

describe('UTF-8 validation across chunks', () => {
  it('accepts characters split at any byte and rejects bad bytes', () => {
    const text = Buffer.from('a€b𝄞c');
    for (let cut = 0; cut <= text.length; cut++) {
      const v = new Utf8Validator();
      expect(v.push(text.subarray(0, cut)) && v.push(text.subarray(cut)) && v.end()).toBe(true);
    }
    const v = new Utf8Validator();
    expect(v.push(Buffer.from([0x61, 0xc3, 0x28]))).toBe(false);
    const truncated = new Utf8Validator();
    truncated.push(Buffer.from([0x61, 0xe2, 0x82]));
    expect(truncated.end()).toBe(false);
  });
});

describe('long lines', () => {
  it('are joined once, not chunk by chunk (a 4 MB line in 1 KB chunks)', () => {
    const line = `{"x":"${'y'.repeat(4_000_000)}"}`;
    const text = Buffer.from(`${line}\n{"ok":1}\n`);
    const chunks: Buffer[] = [];
    for (let i = 0; i < text.length; i += 1024) chunks.push(text.subarray(i, i + 1024));
    const { lines } = split(chunks, 8_000_000);
    expect(lines.map(([n, t]) => [n, t.length])).toEqual([[1, line.length], [2, 8]]);
  });
});

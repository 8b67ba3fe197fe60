import { describe, expect, it } from 'vitest';
import { parseKeepingDigits } from '../../src/records/long-numbers.js';
import { JSON_FALSE, JSON_NULL, JSON_NUMBER, JSON_STRING, JSON_TRUE, JsonLine } from '../../src/records/json-line.js';
import { pick, seeded } from '../helpers/random.js';

/** The members a scan found, as [name, value] pairs in the order written. */
function members(line: JsonLine): Array<[string, unknown]> {
  return Array.from({ length: line.count }, (_, i) => [line.name(i), line.value(i)]);
}

/** Scans text placed inside a larger buffer, as a line of a chunk is. */
function scan(text: string): JsonLine | undefined {
  const buffer = Buffer.from(`{"before":1}\n${text}\n{"after":2}`);
  const start = buffer.indexOf(10) + 1;
  const line = new JsonLine();
  return line.scan(buffer, start, buffer.lastIndexOf(10)) ? line : undefined;
}

describe('the flat JSONL line scanner', () => {
  it('finds every member of a flat object, with the value JSON.parse gives, without reading past the line', () => {
    const text = '{"s":"a","e":"Zo\\u00eb \\"Q\\" \\\\ \\/ \\n","n":-12.5e-3,"z":0,"t":true,"f":false,"u":null,"empty":""}';
    const line = scan(text)!;
    expect(members(line)).toEqual(Object.entries(JSON.parse(text) as object));
    expect([...line.tokens.subarray(0, line.count)]).toEqual([JSON_STRING, JSON_STRING, JSON_NUMBER, JSON_NUMBER, JSON_TRUE, JSON_FALSE, JSON_NULL, JSON_STRING]);
    expect([...line.escaped.subarray(0, line.count)]).toEqual([0, 1, 0, 0, 0, 0, 0, 0]);
    expect(line.text(1)).toBe('Zoë "Q" \\ / \n');
  });

  it('accepts JSON whitespace between tokens and an empty object', () => {
    expect(members(scan(' \t{ "a" :\t1 , "b": "x" }\r ')!)).toEqual([['a', 1], ['b', 'x']]);
    expect(scan('{}')!.count).toBe(0);
    expect(scan(' { } ')!.count).toBe(0);
  });

  it('grows past 32 members', () => {
    const record = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`f${i}`, i]));
    expect(members(scan(JSON.stringify(record))!)).toEqual(Object.entries(record));
  });

  it('leaves to JSON.parse what is not a flat object of simple values, and what is not JSON', () => {
    const refused = [
      '{"a":{"b":1}}', '{"a":[1]}', '{"a\\u0062":1}', '[1]', '"text"', '1', '',
      '{"a":1', '{"a":1}}', '{"a":1,}', '{,"a":1}', '{"a" 1}', '{a:1}', "{'a':1}", '{"a":1 "b":2}',
      '{"a":"x\\q"}', '{"a":"x\\u12"}', '{"a":"tab\there"}', '{"a":"open}',
      '{"a":01}', '{"a":1.}', '{"a":.5}', '{"a":+1}', '{"a":-}', '{"a":1e}', '{"a":0x1}', '{"a":NaN}', '{"a":tru}', '{"a":nul}', '{"a":True}', '{"a":undefined}',
    ];
    for (const text of refused) expect(scan(text), text).toBeUndefined();
  });

  it('reads a line the same with expected names as without, and flags exactly the names equal to the expected ones', () => {
    const random = seeded(34);
    const names = ['a', 'ab', 'userId', 'userI', 'userIdx', 'é', 'e', '小', 'a\\b', 'a"', ''];
    const layout = [Buffer.from('userId'), Buffer.from('a'), undefined, Buffer.from('é'), Buffer.from('ab'), Buffer.from('')];
    let flagged = 0;
    let accepted = 0;
    for (let round = 0; round < 3000; round++) {
      const count = Math.floor(random() * 7);
      const parts = Array.from({ length: count }, () => `${JSON.stringify(pick(random, names))}:${pick(random, ['1', '"v"', 'null', ' "x" '])}`);
      let text = `{${parts.join(',')}}`;
      if (round % 3 === 1) {
        const at = Math.floor(random() * text.length);
        text = text.slice(0, at) + pick(random, ['"', '\\', ':', ',', 'd', '\u0001']) + text.slice(at + 1);
      }
      const buffer = Buffer.from(`${text}\n"userId"`);
      const plain = new JsonLine();
      const guided = new JsonLine();
      guided.expected = layout;
      const plainAccepts = plain.scan(buffer, 0, buffer.indexOf(10));
      expect(guided.scan(buffer, 0, buffer.indexOf(10)), text).toBe(plainAccepts);
      if (!plainAccepts) continue;
      accepted++;
      expect(guided.comparedWith).toBe(layout);
      for (const field of ['nameStarts', 'nameEnds', 'valueStarts', 'valueEnds', 'tokens', 'escaped'] as const) {
        expect([...guided[field].subarray(0, guided.count)], `${field} of ${text}`).toEqual([...plain[field].subarray(0, plain.count)]);
      }
      for (let i = 0; i < guided.count; i++) {
        const equal = i < layout.length && layout[i] !== undefined && buffer.subarray(guided.nameStarts[i], guided.nameEnds[i]).equals(layout[i]!);
        expect(guided.asExpected[i], `${text} member ${i}`).toBe(equal ? 1 : 0);
        if (equal) flagged++;
      }
    }
    expect(accepted).toBeGreaterThan(1000);
    expect(flagged).toBeGreaterThan(150);
  });

  it('never accepts a line JSON.parse refuses, nor reads one differently (random flat objects, then random byte edits)', () => {
    const random = seeded(21);
    const names = ['a', 'userId', 'é', '小', 'with space', '0', '__proto__', 'a'];
    const values = ['x', '', 'Zo\u00eb', '😀', '"q"', 'back\\', 'line\nbreak', 0, -1.5, 1e21, 12345678901234567890, true, false, null];
    const space = (): string => pick(random, ['', '', '', ' ', '\t', ' \r ']);
    let accepted = 0;
    let edited = 0;
    let refusedByBoth = 0;
    for (let round = 0; round < 4000; round++) {
      const count = Math.floor(random() * 6);
      const parts = Array.from({ length: count }, () => `${space()}${JSON.stringify(pick(random, names))}${space()}:${space()}${JSON.stringify(pick(random, values))}${space()}`);
      let text = `${space()}{${parts.join(',')}}${space()}`;
      if (round % 2 === 1) {
        const at = Math.floor(random() * text.length);
        const edit = pick(random, ['delete', 'insert', 'replace']);
        const char = pick(random, [...'{}[]",:\\ 0-.eEtfnu\t\u0001a']);
        text = text.slice(0, at) + (edit === 'delete' ? '' : char) + text.slice(edit === 'insert' ? at : at + 1);
        edited++;
      }
      // An edit that splits a surrogate pair makes text that is not UTF-8; lines are UTF-8 by the time they are scanned.
      if (Buffer.from(text).toString() !== text) continue;
      const line = scan(text);
      let parsed: unknown;
      let parses = true;
      try {
        // As the tap's object path reads it: a number with more digits than a double keeps stays raw JSON where the runtime can.
        parsed = parseKeepingDigits(text);
      } catch {
        parses = false;
      }
      if (line === undefined) {
        if (!parses) refusedByBoth++;
        continue;
      }
      accepted++;
      expect(parses, text).toBe(true);
      // JSON.parse keeps a repeated name's last value: the scan keeps every member in order.
      const last = new Map(members(line));
      expect(Object.fromEntries(last), text).toEqual({ ...(parsed as object) });
    }
    expect(accepted).toBeGreaterThan(2500);
    expect(edited).toBe(2000);
    expect(refusedByBoth).toBeGreaterThan(500);
  });
});

describe('reading a line while finding its end (scanLine, over a chunk not yet split)', () => {
  /** What the splitter then scan would make of the line at `start`: its line break, and the members of its object (undefined when refused). */
  function splitThenScan(buffer: Buffer, start: number): { lineFeed: number; read?: Array<[string, unknown]> } {
    const lineFeed = buffer.indexOf(10, start);
    const end = buffer[lineFeed - 1] === 0x0d ? lineFeed - 1 : lineFeed;
    const line = new JsonLine();
    return { lineFeed, read: line.scan(buffer, start, end) ? members(line) : undefined };
  }

  it('reads every line as splitting then scanning does, and finds the same line break, or leaves the line to the splitter', () => {
    const random = seeded(55);
    const bodies = ['{"a":1}', '{"a":"x","b":null}', '{}', ' { "a" : 1 } ', '{"a":1}\r', '{"a":1} \r', '{"a":1}\r\r', '', '  ', '{"a":', '"a"', '{"a":"tab\there"}', '{"a":1}}', '\uFEFF{"a":1}', '{"a":"line\\nbreak"}', '{"小":"😀"}'];
    let read = 0;
    let leftToSplitter = 0;
    for (let round = 0; round < 300; round++) {
      const lines = Array.from({ length: 1 + Math.floor(random() * 6) }, () => pick(random, bodies));
      const buffer = Buffer.from(`${lines.join('\n')}\n`);
      const limit = buffer.lastIndexOf(10) + 1;
      for (let start = 0; start < limit; start = buffer.indexOf(10, start) + 1) {
        const line = new JsonLine();
        const lineFeed = line.scanLine(buffer, start, limit);
        const expected = splitThenScan(buffer, start);
        if (lineFeed === -1) {
          leftToSplitter++;
          // Only a line scan refuses too is left to the splitter: a line scan reads is always read here.
          expect(expected.read, buffer.toString('utf8', start, expected.lineFeed)).toBeUndefined();
          // The decoder is then told the line was refused, and does not scan it again.
          const lineEnd = buffer[expected.lineFeed - 1] === 0x0d ? expected.lineFeed - 1 : expected.lineFeed;
          expect(line.lineScanned(buffer, start, lineEnd)).toBe(false);
          continue;
        }
        read++;
        expect(lineFeed).toBe(expected.lineFeed);
        expect(members(line)).toEqual(expected.read);
        expect(line.lineScanned(buffer, start, buffer[lineFeed - 1] === 0x0d ? lineFeed - 1 : lineFeed)).toBe(true);
      }
    }
    expect(read).toBeGreaterThan(500);
    expect(leftToSplitter).toBeGreaterThan(300);
  });

  it('never reads on into the next line, where JSON whitespace would let it', () => {
    const buffer = Buffer.from('{"a":1\n,"b":2}\n{"c":\n3}\n');
    const line = new JsonLine();
    expect(line.scanLine(buffer, 0, buffer.length)).toBe(-1);
    expect(line.scanLine(buffer, buffer.indexOf('{"c"'), buffer.length)).toBe(-1);
    // The last scanLine was of another line: nothing is said of this one.
    expect(line.lineScanned(buffer, 0, 6)).toBeUndefined();
  });

  it('stops at the limit: a last line without its line break is left to the splitter', () => {
    const buffer = Buffer.from('{"a":1}\n{"b":2}');
    const line = new JsonLine();
    expect(line.scanLine(buffer, 8, buffer.length)).toBe(-1);
    expect(line.scanLine(buffer, 0, 8)).toBe(7);
  });

  it('a scan after a scanLine leaves no line scanned: lineScanned() is only for the line scanLine read', () => {
    const buffer = Buffer.from('{"a":1}\n{"b":2}\n');
    const line = new JsonLine();
    expect(line.scanLine(buffer, 0, buffer.length)).toBe(7);
    expect(line.scan(buffer, 8, 15)).toBe(true);
    expect(line.lineScanned(buffer, 8, 15)).toBeUndefined();
    expect(line.lineScanned(buffer, 0, 7)).toBeUndefined();
  });
});

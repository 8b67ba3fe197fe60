import { describe, expect, it } from 'vitest';
import { hash64 } from '../../src/records/hash64.js';
import { RowIdentity } from '../../src/records/row-identity.js';
import { JsonLine } from '../../src/records/json-line.js';
import { pick, seeded } from '../helpers/random.js';
import { KEY_PROPERTIES, startTestSandbox } from '../helpers/sandbox.js';

const EXCLUDED = '_ab_extracted_at';

interface Identity {
  key: string;
  keyHash: [number, number];
  content: [number, number];
}

/** Reads text placed inside a larger buffer (as a record in a chunk is), or undefined when read refuses it. */
function read(identity: RowIdentity, text: string, before = '{"before":1}\n'): Identity | undefined {
  const buffer = Buffer.from(`${before}${text}\n{"after":2}`);
  const start = Buffer.byteLength(before);
  if (!identity.read(buffer, start, start + Buffer.byteLength(text))) return undefined;
  return { key: identity.keyJson().toString(), keyHash: [identity.keyHi, identity.keyLo], content: [identity.contentHi, identity.contentLo] };
}

function hashOf(text: string): [number, number] {
  const bytes = Buffer.from(text);
  const out = { hi: 0, lo: 0 };
  hash64(bytes, 0, bytes.length, out);
  return [out.hi, out.lo];
}

describe('a row identity read from a record\'s bytes', () => {
  it('gives the key as a JSON array of the key values\' bytes in key order, its hash that of the array, the content that of the object', () => {
    const identity = new RowIdentity(['userId', 'programId', 'moduleId']);
    const text = '{"moduleId":"mod-02-02","score":null,"userId":"usr-0000250","programId":"prog-02"}';
    const first = read(identity, text)!;
    expect(first.key).toBe('["usr-0000250","prog-02","mod-02-02"]');
    expect(first.keyHash).toEqual(hashOf(first.key));
    expect(first.content).toEqual(hashOf(text));
    expect(read(identity, text)).toEqual(first);
    expect(read(new RowIdentity(['userId', 'programId', 'moduleId']), text)).toEqual(first);
    // Values as they are written: escapes, numbers and nested values kept byte for byte, so 12,3 and 1,23 differ.
    const numbers = new RowIdentity(['id', 'sub']);
    expect(read(numbers, '{"id":12,"sub":3}')!.key).toBe('[12,3]');
    expect(read(numbers, '{"id":1,"sub":23}')!.keyHash).not.toEqual(read(numbers, '{"id":12,"sub":3}')!.keyHash);
    expect(read(numbers, '{"id":"a\\u0062","sub":[1, {"x":-0.5e3}]}')!.key).toBe('["a\\u0062",[1, {"x":-0.5e3}]]');
  });

  it('changes the content hash for any byte changed, and the key hash only when a key value changes', () => {
    const identity = new RowIdentity(['userId', 'programId', 'moduleId']);
    const text = '{"userId":"usr-0000000","email":"soren.schroder.0@example.com","firstName":"Søren","programId":"prog-06","moduleId":"mod-06-01","completed":true,"progress":100,"score":86.2,"lastActivityAt":"2025-04-24T12:20:00Z"}';
    const original = read(identity, text)!;
    const contents = new Set<string>([original.content.join()]);
    let changed = 0;
    for (let i = 0; i < text.length; i++) {
      // Each letter or digit for another of its kind: the record stays JSON.
      const replacement = /[0-9]/.test(text[i]) ? String((Number(text[i]) + 1) % 10) : /[a-zA-Z]/.test(text[i]) && !/(?:true)/.test(text.slice(i - 3, i + 4)) ? (text[i] === 'x' ? 'y' : 'x') : undefined;
      if (replacement === undefined) continue;
      const other = text.slice(0, i) + replacement + text.slice(i + 1);
      const row = read(identity, other);
      if (row === undefined) continue;
      changed++;
      contents.add(row.content.join());
      const keyChanged = JSON.stringify(['userId', 'programId', 'moduleId'].map((k) => (JSON.parse(other) as Record<string, unknown>)[k])) !== original.key;
      expect(row.keyHash.join() !== original.keyHash.join(), other).toBe(keyChanged);
    }
    expect(changed).toBeGreaterThan(100);
    expect(contents.size).toBe(changed + 1);
  });

  it('reads JSON whitespace, members in any order, escaped names, and nested values (a key name inside one is not a key)', () => {
    const identity = new RowIdentity(['userId', 'programId']);
    const cases: Array<[string, string]> = [
      [' \t{ "userId" :\n"u1" ,\r\n"programId": "p1" }\n ', '["u1","p1"]'],
      ['{"programId":"p1","userId":"u1"}', '["u1","p1"]'],
      ['{"user\\u0049d":"u1","\\u0070rogramId":"p1"}', '["u1","p1"]'],
      ['{"nested":{"userId":"not this","list":[{"programId":"nor this"},[],{}]},"userId":"u1","programId":"p1"}', '["u1","p1"]'],
      ['{"userId":{"a":[1,"]}"]},"programId":["p",{"q":null}]}', '[{"a":[1,"]}"]},["p",{"q":null}]]'],
      // A name given twice keeps its last value, as JSON.parse does.
      ['{"userId":"first","programId":"p1","userId":"last"}', '["last","p1"]'],
    ];
    for (const [text, key] of cases) {
      expect(read(identity, text)?.key, text).toBe(key);
      expect(read(new RowIdentity(['userId', 'programId']), text)?.key, `${text} read first`).toBe(key);
    }
    // The content hash is of the object, from { to }: whitespace around it is not part of it.
    expect(read(identity, '  {"userId":"u1","programId":"p1"}\r')!.content).toEqual(hashOf('{"userId":"u1","programId":"p1"}'));
  });

  it('leaves the excluded member out of the content hash wherever it is, with one comma, so a record hashes alike with and without it', () => {
    const identity = new RowIdentity(['id'], EXCLUDED);
    const at = `"${EXCLUDED}":"2026-11-26T05:00:00.000Z"`;
    const alike: Array<[string, string]> = [
      [`{"id":1,"a":"x",${at}}`, '{"id":1,"a":"x"}'],
      [`{${at},"id":1,"a":"x"}`, '{"id":1,"a":"x"}'],
      [`{"id":1,${at},"a":"x"}`, '{"id":1,"a":"x"}'],
      [`{${at},${at},"id":1}`, '{"id":1}'],
      [`{"id":1,${at},${at}}`, '{"id":1}'],
      // With whitespace, the bytes left are those around the member and its comma.
      [`{ "id":1 , ${at} }`, '{ "id":1  }'],
      [`{ ${at} , "id":1}`, '{  "id":1}'],
      // Only a top-level member is excluded.
      [`{"id":1,"a":{${at}}}`, `{"id":1,"a":{${at}}}`],
    ];
    for (const [text, without] of alike) {
      expect(read(identity, text)?.content, text).toEqual(hashOf(without));
      expect(read(identity, without)?.content, without).toEqual(hashOf(without));
    }
    expect(read(new RowIdentity([], EXCLUDED), `{${at}}`)!.content).toEqual(hashOf('{}'));
    expect(read(new RowIdentity(['id']), `{"id":1,${at}}`)!.content).not.toEqual(hashOf('{"id":1}'));
    expect(read(identity, `{"id":1,"${EXCLUDED}":"2026-11-27T05:00:00.000Z"}`)!.content).toEqual(read(identity, `{"id":1,${at}}`)!.content);
    expect(() => new RowIdentity(['id', EXCLUDED], EXCLUDED)).toThrow(/given twice/);
  });

  it('refuses a record without every key, and then has no key to give', () => {
    const identity = new RowIdentity(['userId', 'programId']);
    expect(read(identity, '{"userId":"u1","programId":"p1"}')).toBeDefined();
    for (const text of ['{"userId":"u1"}', '{"programId":"p1","other":1}', '{}', '{"nested":{"userId":"u1","programId":"p1"}}']) {
      expect(read(identity, text), text).toBeUndefined();
      expect(() => identity.keyJson()).toThrow(/returned false/);
    }
    expect(read(new RowIdentity([]), '{}')!.key).toBe('[]');
  });

  it('refuses what is not one JSON object', () => {
    const identity = new RowIdentity(['a']);
    for (const text of ['[1]', '"text"', '1', 'null', '[{"a":1}]']) expect(read(identity, text), text).toBeUndefined();
    const refused = [
      '', ' ', '{"a":1}{"a":1}', '{"a":1} x',
      '{"a":1', '{"a":1}}', '{"a":1,}', '{,"a":1}', '{"a" 1}', '{a:1}', "{'a':1}", '{"a":1 "b":2}', '{"a"::1}',
      '{"a":"x\\q"}', '{"a":"x\\u12"}', '{"a":"x\\u12g4"}', '{"a":"tab\there"}', '{"a":"line\nbreak"}', '{"a":"open}', '{"a\\":1}',
      '{"a":01}', '{"a":1.}', '{"a":.5}', '{"a":+1}', '{"a":-}', '{"a":1e}', '{"a":0x1}', '{"a":NaN}', '{"a":tru}', '{"a":nul}', '{"a":True}', '{"a":undefined}',
      '{"a":[1,]}', '{"a":[,1]}', '{"a":{"b"}}', '{"a":{"b":}}', '{"a":{1:2}}', '{"a":[1}', '{"a":{"b":1]}', '{"a":[[[]]}', '{"a":{"b":1,}}',
    ];
    for (const text of refused) {
      expect(() => JSON.parse(text), text).toThrow();
      expect(read(identity, text), text).toBeUndefined();
    }
  });

  it('reads a record at any offset, and at the very end of its ArrayBuffer', () => {
    const identity = new RowIdentity(['userId']);
    for (let length = 0; length < 24; length++) {
      const text = `{"userId":"${'u'.repeat(length)}","b":"${'é'.repeat(length % 5)}"}`;
      const expected = read(new RowIdentity(['userId']), text);
      for (let offset = 0; offset < 8; offset++) expect(read(identity, text, ' '.repeat(offset)), `${text} at ${offset}`).toEqual(expected);
      // Read along the layout, and from scratch.
      const alone = Buffer.from(new Uint8Array(Buffer.from(text)).buffer);
      for (const reader of [identity, new RowIdentity(['userId'])]) {
        expect(reader.read(alone, 0, alone.length), text).toBe(true);
        expect([reader.contentHi, reader.contentLo]).toEqual(expected!.content);
      }
    }
  });

  it('reads the sandbox\'s training and phishing lines: every one keyed as JSON.parse sees it, no two alike', async () => {
    const sandbox = await startTestSandbox({ trainingRecords: 600, phishingRecords: 600 });
    try {
      for (const stream of ['training', 'phishing'] as const) {
        const keys = KEY_PROPERTIES[stream];
        const identity = new RowIdentity(keys);
        const lines = sandbox.dump(stream, 'jsonl').split('\n').filter((line) => line !== '');
        const keyHashes = new Set<string>();
        const contents = new Set<string>();
        for (const line of lines) {
          const row = read(identity, line)!;
          const record = JSON.parse(line) as Record<string, unknown>;
          expect(row.key).toBe(JSON.stringify(keys.map((k) => record[k])));
          keyHashes.add(row.keyHash.join());
          contents.add(row.content.join());
        }
        expect(lines.length).toBeGreaterThan(500);
        expect(keyHashes.size).toBe(lines.length);
        expect(contents.size).toBe(lines.length);
      }
    } finally {
      await sandbox.close();
    }
  });
});

/** A record written by parts, so the test knows its text without the excluded member (by the rule the module states). */
interface Written {
  text: string;
  /** The object's text with each excluded member left out, or undefined when it was edited after writing. */
  without: string | undefined;
}

interface Member {
  name: string;
  value: string;
  /** Whitespace before the name, after it, after the colon, after the value. */
  spaces: [string, string, string, string];
}

function write(members: readonly Member[], outside: [string, string], edited: boolean): Written {
  const part = (m: Member): string => `${m.spaces[0]}${m.name}${m.spaces[1]}:${m.spaces[2]}${m.value}${m.spaces[3]}`;
  const object = `{${members.map(part).join(',')}}`;
  if (edited) return { text: object, without: undefined };
  let without = '{';
  let kept = false;
  for (const [i, m] of members.entries()) {
    const excluded = (JSON.parse(m.name) as string) === EXCLUDED;
    const last = i === members.length - 1;
    if (!excluded) {
      without += `${kept ? ',' : ''}${part(m)}`;
      kept = true;
    } else if (kept) {
      // The comma before it and the member up to its value go: the space after its value stays.
      without += m.spaces[3];
    } else {
      // Nothing kept before it: the member and the comma after it go, the space before its name stays.
      without += last ? `${m.spaces[0]}${m.spaces[3]}` : m.spaces[0];
    }
  }
  // A comma between two kept members follows the spaces left of an excluded one between them: written in order above.
  return { text: `${outside[0]}${object}${outside[1]}`, without: `${without}}` };
}

describe('a row identity against JSON.parse (random seeded records)', () => {
  it('reads every record as JSON.parse does, along the layout it learnt and from scratch alike, with the content of the record without the excluded member', () => {
    const random = seeded(29);
    const keys = ['userId', 'programId'];
    const pool = [...keys, EXCLUDED, 'a', 'email', 'é', '小', 'with space', 'x"y', '__proto__'];
    const values = ['"u1"', '"usr-0000250"', '12', '-0.5e3', 'true', 'false', 'null', '""', '"Zo\\u00eb \\"q\\" \\\\ \\n"', '"😀 smile"', '"Søren"',
      '[]', '{}', '[1,"]",{"userId":"no"}]', `{"${EXCLUDED}":{"a":[null]}}`, '"2026-11-26T05:00:00.000Z"'];
    const spaces = ['', '', '', ' ', '\t', '\r\n '];
    const spelled = (name: string, escaped: boolean): string => (escaped ? `"\\u${name.charCodeAt(0).toString(16).padStart(4, '0')}${JSON.stringify(name).slice(2)}` : JSON.stringify(name));
    const shared = new RowIdentity(keys, EXCLUDED);
    let layout: Array<{ name: string }> = [];
    let spacedLayout = false;
    const counts = { read: 0, refused: 0, edited: 0, excluded: 0 };
    for (let round = 0; round < 4000; round++) {
      if (round % 7 === 0) {
        // A new layout for the next records: names in some order, maybe one twice, maybe escaped, maybe spaced.
        const names = pool.filter(() => random() < 0.6);
        if (random() < 0.9) names.push(...keys.filter((k) => !names.includes(k)));
        if (random() < 0.1) names.push(pick(random, pool));
        names.sort(() => random() - 0.5);
        const escaped = random() < 0.2;
        layout = names.map((name) => ({ name: spelled(name, escaped && random() < 0.5) }));
        spacedLayout = random() < 0.3;
      }
      const space = (): string => (spacedLayout || random() < 0.05 ? pick(random, spaces) : '');
      const members = layout.map(({ name }) => ({ name, value: pick(random, values), spaces: [space(), space(), space(), space()] as [string, string, string, string] }));
      const edited = round % 5 === 4;
      let { text, without } = write(members, [space(), space()], edited);
      if (edited) {
        const at = Math.floor(random() * text.length);
        const edit = pick(random, ['delete', 'insert', 'replace']);
        const char = pick(random, [...'{}[]",:\\ 0-.eEtfnu\t\u0001a']);
        text = text.slice(0, at) + (edit === 'delete' ? '' : char) + text.slice(edit === 'insert' ? at : at + 1);
        counts.edited++;
      }
      const bytes = Buffer.from(text);
      let parsed: unknown;
      try {
        parsed = JSON.parse(bytes.toString());
      } catch {
        parsed = undefined;
      }
      const record = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
      const keyed = record !== undefined && keys.every((k) => Object.hasOwn(record, k));
      const row = read(shared, text);
      expect(row !== undefined, text).toBe(keyed);
      expect(read(new RowIdentity(keys, EXCLUDED), text), `${text} read first`).toEqual(row);
      if (row === undefined) {
        counts.refused++;
        continue;
      }
      counts.read++;
      if (without === undefined) continue;
      // Each key's value as written where the name comes last.
      const written = (key: string): string => members.filter((m) => JSON.parse(m.name) === key).at(-1)!.value;
      expect(row.key, text).toBe(`[${keys.map(written).join(',')}]`);
      expect(row.content, `${text} without ${EXCLUDED}: ${without}`).toEqual(hashOf(without));
      if (text.includes(EXCLUDED)) counts.excluded++;
    }
    console.log(counts, (globalThis as unknown as { fast: number[] }).fast);
    expect(counts.read).toBeGreaterThan(2500);
    expect(counts.refused).toBeGreaterThan(500);
    expect(counts.edited).toBeGreaterThan(700);
    expect(counts.excluded).toBeGreaterThan(1200);
  });
});

describe('a row identity read from a line the JSONL scanner read', () => {
  it('finds the key members wherever each line has them (their places changing from line to line) and gives what reading the bytes gives', () => {
    const random = seeded(41);
    const keys = ['userId', 'programId', 'moduleId'];
    const others = ['email', 'score', 'completed', 'completedAt', 'userIdx', 'user'];
    const scanned = new JsonLine();
    const fromScan = new RowIdentity(keys);
    let found = 0;
    for (let round = 0; round < 500; round++) {
      const names = [...keys, ...others.filter(() => random() < 0.5)].sort(() => random() - 0.5);
      const text = `{${names.map((name) => `"${name}":${pick(random, ['"u1"', '"usr-0000250"', '12', 'true', 'null', '"Søren"'])}`).join(',')}}`;
      const bytes = Buffer.from(`{"before":1}\n${text}\n`);
      const start = 13;
      expect(scanned.scan(bytes, start, start + Buffer.byteLength(text)), text).toBe(true);
      expect(fromScan.readScanned(scanned), text).toBe(true);
      const viaScan = { key: fromScan.keyJson().toString(), keyHash: [fromScan.keyHi, fromScan.keyLo], content: [fromScan.contentHi, fromScan.contentLo] };
      expect(viaScan, text).toEqual(read(new RowIdentity(keys), text, '{"before":1}\n'));
      found++;
    }
    expect(found).toBe(500);
    // A line without a key member is left to `read`.
    const missing = Buffer.from('{"userId":"u1","programId":"p"}');
    expect(scanned.scan(missing, 0, missing.length)).toBe(true);
    expect(fromScan.readScanned(scanned)).toBe(false);
  });
});

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bookmarkValue, foreignState, parseState, readStateFile, StateStore } from '../src/state.js';
import { TapError } from '../src/errors.js';
import { tempFolder } from './helpers/files.js';

describe('state merging', () => {
  it('keeps unknown keys and other streams when one stream is updated', () => {
    const store = new StateStore({ bookmarks: { training: { replication_key: 'completedAt', replication_key_value: '2024-01-01T00:00:00Z', custom: 1 }, other: { x: true } }, currently_syncing: null, extra: 'kept' });
    store.update('training', { replication_key_value: '2024-02-01T00:00:00Z', last_modified: undefined });
    store.update('phishing', { replication_key: 'sentAt', replication_key_value: '2024-03-01T00:00:00Z' });
    expect(store.snapshot()).toEqual({
      bookmarks: {
        training: { replication_key: 'completedAt', replication_key_value: '2024-02-01T00:00:00Z', custom: 1 },
        other: { x: true },
        phishing: { replication_key: 'sentAt', replication_key_value: '2024-03-01T00:00:00Z' },
      },
      currently_syncing: null,
      extra: 'kept',
    });
  });

  it('hands out snapshots that later updates do not change', () => {
    const store = new StateStore();
    store.update('training', { replication_key_value: '2024-01-01T00:00:00Z' });
    const first = store.snapshot();
    store.update('training', { replication_key_value: '2024-06-01T00:00:00Z' });
    expect(first.bookmarks?.training.replication_key_value).toBe('2024-01-01T00:00:00Z');
  });

  it('accepts a STATE message, an empty file, an older layout and a partial bookmark', () => {
    expect(parseState({ type: 'STATE', value: { bookmarks: { training: {} } } }, 't')).toEqual({ bookmarks: { training: {} } });
    expect(parseState({}, 't')).toEqual({ bookmarks: {} });
    expect(bookmarkValue({ completedAt: '2024-05-01T10:00:00+02:00' }, 'completedAt')).toBe('2024-05-01T08:00:00Z');
    expect(bookmarkValue({ replication_key: 'completedAt' }, 'completedAt')).toBeUndefined();
    const dir = tempFolder('state-');
    writeFileSync(join(dir, 'empty.json'), '\n');
    expect(readStateFile(join(dir, 'empty.json'))).toEqual({ bookmarks: {} });
  });

  it('rejects an unreadable state with a message naming the problem', () => {
    const dir = tempFolder('state-');
    writeFileSync(join(dir, 'bad.json'), '{"bookmarks": ');
    expect(() => readStateFile(join(dir, 'bad.json'))).toThrow(/not valid JSON/);
    expect(() => readStateFile(join(dir, 'missing.json'))).toThrow(/Cannot read state file/);
    expect(() => parseState({ bookmarks: { training: { replication_key_value: 'last tuesday' } } }, 't')).toThrow(/replication_key_value/);
    expect(() => parseState({ bookmarks: [] }, 't')).toThrow(TapError);
  });

  it('accepts the members full passes and open rows leave, and refuses shapes it does not write, naming the member', () => {
    const good = { bookmarks: { training: { full_pass: { at: '2026-06-15T12:00:00Z', version: 1781524800000, rows: 3 }, open_rows: { last_modified: 'Mon, 15 Jun 2026 11:00:00 GMT' } } } };
    expect(parseState(good, 't')).toEqual(good);
    const withDue = { bookmarks: { training: { full_pass: { at: '2026-06-15T05:58:00Z', due: '2026-06-15T06:00:00Z', rows: 3 }, change_pass: { at: '2026-06-16T05:58:00Z', due: '2026-06-16T06:00:00Z' } } } };
    expect(parseState(withDue, 't')).toEqual(withDue);
    for (const [member, value] of [
      ['full_pass', { at: 'yesterday' }],
      ['full_pass', { version: 3 }],
      ['full_pass', { at: '2026-06-15T12:00:00Z', rows: 2.5 }],
      ['open_rows', 'soon'],
      ['full_pass', { at: '2026-06-15T12:00:00Z', due: 'tomorrow' }],
      ['change_pass', { at: '2026-06-15T12:00:00Z', due: 1781589600000 }],
      ['change_pass', { due: '2026-06-15T12:00:00Z' }],
    ] as const) {
      expect(() => parseState({ bookmarks: { training: { [member]: value } } }, 'file s.json'), member).toThrow(`State file s.json: bookmarks.training.${member} is not what this tap writes there. Remove that member (the next run rebuilds it), or fix it.`);
    }
  });
});

describe('a state in Meltano\'s wrappers, or of another tap', () => {
  const own = { bookmarks: { training: { replication_key: 'completedAt', replication_key_value: '2025-06-01T00:00:00Z' } } };

  it('unwraps what meltano state get prints ({"singer_state": ...}): nothing of the wrapper is kept', () => {
    expect(parseState({ singer_state: own }, 'file s.json')).toEqual(own);
    expect(parseState({ type: 'STATE', value: { singer_state: own } }, 'file s.json')).toEqual(own);
  });

  it('unwraps a state backend\'s file, its partial state merged over its completed one as Meltano merges them', () => {
    const completed = { bookmarks: { training: { replication_key_value: '2025-06-01T00:00:00Z', full_pass: { at: '2026-01-01T00:00:00Z' } }, phishing: { replication_key_value: '2025-05-01T00:00:00Z' } } };
    const partial = { bookmarks: { training: { replication_key_value: '2025-07-01T00:00:00Z' } } };
    expect(parseState({ completed: { singer_state: completed }, partial: { singer_state: partial } }, 'file s.json')).toEqual({
      bookmarks: { training: { replication_key_value: '2025-07-01T00:00:00Z', full_pass: { at: '2026-01-01T00:00:00Z' } }, phishing: { replication_key_value: '2025-05-01T00:00:00Z' } },
    });
    expect(parseState({ completed: { singer_state: completed }, partial: {} }, 'file s.json')).toEqual(completed);
  });

  it('leaves a state of its own as it is, a member named singer_state beside its bookmarks included', () => {
    expect(parseState({ ...own, singer_state: { bookmarks: {} } }, 'file s.json')).toEqual({ ...own, singer_state: { bookmarks: {} } });
  });

  it('says, naming only streams and members (never values), what a state held when it holds no bookmark of a selected stream', () => {
    const other = { currently_syncing: 'users', bookmarks: { users: { updated_at: 'alice@example.com' } } };
    const warning = foreignState(parseState(other, 'file s.json'), ['training', 'phishing']);
    expect(warning).toBe(
      "The state holds no bookmark of training, phishing (it holds bookmarks of users and the members currently_syncing), so they start as a first run. If this was not meant, pass the last STATE this tap's target wrote for this pipeline (with Meltano: meltano state get <state id>).",
    );
    expect(warning).not.toContain('alice');
    expect(foreignState({ wrapped: { bookmarks: {} } } as never, ['training'])).toMatch(/it holds the members wrapped\)/);
  });

  it('shows a few names of such a state, without control characters, cut short, none that looks like an e-mail address', () => {
    const names = ['a\u0001b', 'x'.repeat(60), 'someone@example.com', 'c', 'd', 'e', 'f', 'g'];
    const warning = foreignState({ bookmarks: Object.fromEntries(names.map((n) => [n, {}])) }, ['training'])!;
    expect(warning).toContain(`bookmarks of a?b, ${'x'.repeat(39)}…, c, d, e, 3 more)`);
    expect(warning).not.toContain('someone');
  });

  it('says nothing of an empty state, or of one that holds a bookmark of a selected stream', () => {
    expect(foreignState({}, ['training'])).toBeUndefined();
    expect(foreignState({ bookmarks: {} }, ['training'])).toBeUndefined();
    expect(foreignState(undefined, ['training'])).toBeUndefined();
    expect(foreignState({ ...own, currently_syncing: null }, ['training', 'phishing'])).toBeUndefined();
  });
});

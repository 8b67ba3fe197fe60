import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bookmarkValue, parseState, readStateFile, StateStore } from '../src/state.js';
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

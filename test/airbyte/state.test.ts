import { describe, expect, it } from 'vitest';
import { stateFromAirbyte } from '../../src/airbyte/state.js';
import { configErrorOf } from '../helpers/errors.js';

const SOURCE = 'state.json';
const TRAINING = { replication_key: 'completedAt', replication_key_value: '2024-05-01T08:00:00Z', boundary_hashes: ['h1'] };
const PHISHING = { replication_key: 'sentAt', replication_key_value: '2024-04-01T00:00:00Z' };

function streamState(name: string, state: unknown): Record<string, unknown> {
  return { type: 'STREAM', stream: { stream_descriptor: { name }, stream_state: state } };
}

const NOT_AIRBYTE = 'State state.json is not an Airbyte state (a list of {"type": "STREAM", "stream": {...}} messages). Pass the state Airbyte saved for this connection, or run without --state.';

describe('stateFromAirbyte reads', () => {
  it('a list of STREAM states as one bookmark per stream', () => {
    expect(stateFromAirbyte([streamState('training', TRAINING), streamState('phishing', PHISHING)], SOURCE)).toEqual({
      bookmarks: { training: TRAINING, phishing: PHISHING },
    });
  });

  it('a STREAM state without the type, recognised by its stream', () => {
    expect(stateFromAirbyte([{ stream: { stream_descriptor: { name: 'phishing' }, stream_state: PHISHING } }], SOURCE)).toEqual({ bookmarks: { phishing: PHISHING } });
  });

  it('a single STREAM state message that is not in a list', () => {
    expect(stateFromAirbyte(streamState('training', TRAINING), SOURCE)).toEqual({ bookmarks: { training: TRAINING } });
  });

  it('no bookmark from a STREAM state whose stream_state is null or absent', () => {
    expect(stateFromAirbyte([streamState('training', null), streamState('phishing', undefined)], SOURCE)).toEqual({ bookmarks: {} });
  });

  it('the later of two STREAM states of one stream', () => {
    const later = { ...TRAINING, replication_key_value: '2024-06-01T00:00:00Z' };
    expect(stateFromAirbyte([streamState('training', TRAINING), streamState('training', later)], SOURCE)).toEqual({ bookmarks: { training: later } });
  });

  it('a GLOBAL state\'s per-stream states, ignoring its shared state', () => {
    const global = {
      type: 'GLOBAL',
      global: {
        shared_state: { cursor: 'ignored' },
        stream_states: [
          { stream_descriptor: { name: 'training' }, stream_state: TRAINING },
          { stream_descriptor: { name: 'phishing' }, stream_state: PHISHING },
        ],
      },
    };
    expect(stateFromAirbyte(global, SOURCE)).toEqual({ bookmarks: { training: TRAINING, phishing: PHISHING } });
    expect(stateFromAirbyte([global], SOURCE)).toEqual({ bookmarks: { training: TRAINING, phishing: PHISHING } });
  });

  it('a legacy {data: ...} object holding the Singer state', () => {
    expect(stateFromAirbyte({ data: { bookmarks: { training: TRAINING } } }, SOURCE)).toEqual({ bookmarks: { training: TRAINING } });
    expect(stateFromAirbyte([{ type: 'LEGACY', data: { bookmarks: { phishing: PHISHING } } }], SOURCE)).toEqual({ bookmarks: { phishing: PHISHING } });
  });

  it('a legacy {data: ...} object without bookmarks as an empty state', () => {
    expect(stateFromAirbyte({ data: {} }, SOURCE)).toEqual({ bookmarks: {} });
  });

  it('a bare {bookmarks: ...} object (the Singer state) as it is', () => {
    const singer = { bookmarks: { training: TRAINING }, currently_syncing: null };
    expect(stateFromAirbyte(singer, SOURCE)).toEqual({ bookmarks: { training: TRAINING }, currently_syncing: null });
  });

  it('empty input (null, undefined, {} or []) as no bookmarks', () => {
    for (const input of [null, undefined, {}, []]) {
      expect(stateFromAirbyte(input, SOURCE), JSON.stringify(input)).toEqual({ bookmarks: {} });
    }
  });
});

describe('stateFromAirbyte rejects', () => {
  it('a STREAM state without stream_descriptor.name, with a config error', () => {
    const message = 'State state.json: a STREAM state has no stream_descriptor.name. Pass the state Airbyte saved for this connection, or remove that entry.';
    expect(configErrorOf(() => stateFromAirbyte([{ type: 'STREAM', stream: { stream_state: TRAINING } }], SOURCE)).message).toBe(message);
    expect(configErrorOf(() => stateFromAirbyte([{ type: 'STREAM' }], SOURCE)).message).toBe(message);
    expect(configErrorOf(() => stateFromAirbyte([streamState('training', TRAINING), { type: 'STREAM', stream: { stream_descriptor: { name: 7 } } }], SOURCE)).message).toBe(message);
  });

  it('a GLOBAL state without name in one of its stream states', () => {
    const global = { type: 'GLOBAL', global: { stream_states: [{ stream_state: TRAINING }] } };
    expect(configErrorOf(() => stateFromAirbyte(global, SOURCE)).message).toBe('State state.json: a STREAM state has no stream_descriptor.name. Pass the state Airbyte saved for this connection, or remove that entry.');
  });

  it('other shapes with a config error naming the source and the expected shape', () => {
    const shapes: unknown[] = [
      42,
      'training',
      true,
      { foo: 1 },
      { type: 'GLOBAL' },
      { type: 'GLOBAL', global: { stream_states: {} } },
      { data: 'text' },
      { data: null },
      [null],
      [streamState('training', TRAINING), 'x'],
    ];
    for (const shape of shapes) {
      expect(configErrorOf(() => stateFromAirbyte(shape, SOURCE)).message, JSON.stringify(shape)).toBe(NOT_AIRBYTE);
    }
  });
});

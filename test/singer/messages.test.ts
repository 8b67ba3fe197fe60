import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { singer } from '../../src/singer/messages.js';
import type { JsonSchema } from '../../src/catalog/schemas.js';
import { schemaValidator } from '../helpers/json-schema.js';

const validateMessage = schemaValidator(JSON.parse(readFileSync(fileURLToPath(new URL('../fixtures/singer-messages.schema.json', import.meta.url)), 'utf8')) as object);

const SCHEMA: JsonSchema = {
  type: 'object',
  properties: { id: { type: 'string' }, updatedAt: { type: ['string', 'null'], format: 'date-time' } },
  required: ['id'],
};

describe('the Singer SCHEMA message', () => {
  it('is one JSON line with the stream, its schema, key_properties and bookmark_properties, in that order', () => {
    const line = singer.schema('widgets', SCHEMA, ['id'], ['updatedAt']);
    expect(line).toBe(
      '{"type":"SCHEMA","stream":"widgets","schema":{"type":"object","properties":{"id":{"type":"string"},"updatedAt":{"type":["string","null"],"format":"date-time"}},"required":["id"]},"key_properties":["id"],"bookmark_properties":["updatedAt"]}',
    );
    expect(validateMessage(JSON.parse(line!)), JSON.stringify(validateMessage.errors)).toBe(true);
  });

  it('has empty bookmark_properties for a FULL_TABLE stream', () => {
    expect(singer.schema('widgets', { type: 'object', properties: {} }, ['a', 'b'], [])).toBe(
      '{"type":"SCHEMA","stream":"widgets","schema":{"type":"object","properties":{}},"key_properties":["a","b"],"bookmark_properties":[]}',
    );
  });
});

describe('the Singer RECORD envelope', () => {
  const extractedAt = new Date(Date.UTC(2024, 4, 1, 8, 30, 15, 250));

  it('has a head up to "record": and a tail carrying time_extracted in UTC with milliseconds', () => {
    expect(singer.recordEnvelope('training', extractedAt)).toEqual({
      head: '{"type":"RECORD","stream":"training","record":',
      tail: ',"time_extracted":"2024-05-01T08:30:15.250Z"}',
    });
  });

  it('makes one valid RECORD message from head, the record\'s JSON text and tail', () => {
    const { head, tail } = singer.recordEnvelope('training', extractedAt);
    const line = `${head}${JSON.stringify({ userId: 'u1', score: null })}${tail}`;
    expect(line).toBe('{"type":"RECORD","stream":"training","record":{"userId":"u1","score":null},"time_extracted":"2024-05-01T08:30:15.250Z"}');
    expect(JSON.parse(line)).toEqual({ type: 'RECORD', stream: 'training', record: { userId: 'u1', score: null }, time_extracted: '2024-05-01T08:30:15.250Z' });
    expect(validateMessage(JSON.parse(line)), JSON.stringify(validateMessage.errors)).toBe(true);
  });

  it('escapes a stream name that needs it', () => {
    const { head } = singer.recordEnvelope('we"ird\\name', extractedAt);
    expect(head).toBe('{"type":"RECORD","stream":"we\\"ird\\\\name","record":');
    expect(JSON.parse(`${head}{}}`).stream).toBe('we"ird\\name');
  });
});

describe('the Singer STATE message', () => {
  it('carries the whole state of every stream, whichever stream changed', () => {
    const whole = {
      bookmarks: {
        training: { replication_key: 'completedAt', replication_key_value: '2024-05-01T08:00:00Z' },
        phishing: { replication_key: 'sentAt', replication_key_value: '2024-04-01T00:00:00Z', boundary_hashes: ['h1'] },
      },
    };
    const expected =
      '{"type":"STATE","value":{"bookmarks":{"training":{"replication_key":"completedAt","replication_key_value":"2024-05-01T08:00:00Z"},"phishing":{"replication_key":"sentAt","replication_key_value":"2024-04-01T00:00:00Z","boundary_hashes":["h1"]}}}}';
    expect(singer.state('training', whole, 3)).toBe(expected);
    expect(singer.state('phishing', whole, 0)).toBe(expected);
    expect(validateMessage(JSON.parse(expected)), JSON.stringify(validateMessage.errors)).toBe(true);
  });

  it('keeps keys of the state it does not know', () => {
    expect(singer.state('training', { bookmarks: {}, currently_syncing: null }, 0)).toBe('{"type":"STATE","value":{"bookmarks":{},"currently_syncing":null}}');
  });
});

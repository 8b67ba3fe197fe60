import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { batchSettings, DEFAULT_BATCH_SIZE } from '../../src/config/batch.js';

describe('batchSettings', () => {
  it('is undefined without batch_config: RECORD messages', () => {
    expect(batchSettings(undefined)).toBeUndefined();
  });

  it('fills the Meltano SDK defaults: gzip, no prefix, singer-sdk in the temporary directory', () => {
    expect(batchSettings({})).toEqual({ directory: join(tmpdir(), 'singer-sdk'), prefix: '', compression: 'gzip', batchSize: DEFAULT_BATCH_SIZE });
    expect(DEFAULT_BATCH_SIZE).toBe(100_000);
  });

  it('reads file:///absolute, file://relative (from the working directory) and percent-escapes', () => {
    const root = (value: string): string => batchSettings({ storage: { root: value } }, '/work/dir')!.directory;
    expect(root('file:///var/lib/batches')).toBe('/var/lib/batches');
    expect(root('file:///var/lib/my%20batches/')).toBe('/var/lib/my batches/');
    expect(root('file://batches/out')).toBe('/work/dir/batches/out');
    expect(root('FILE:///x')).toBe('/x');
  });

  it('refuses other storage with a message naming what is supported', () => {
    for (const root of ['s3://bucket/x', 'gs://b', '/var/lib/batches', 'file:/var/lib', 'ftp://host/x']) {
      expect(() => batchSettings({ storage: { root } }), root).toThrow(/batch_config\.storage\.root must be a file:\/\/ URL of a directory/);
    }
    expect(() => batchSettings({ storage: { root: 's3://bucket' } })).toThrow(/s3:\/\/ storage is not supported/);
  });

  it('refuses a prefix with a folder in it, and storage params', () => {
    expect(() => batchSettings({ storage: { prefix: 'a/b' } })).toThrow(/prefix .* must not contain/);
    expect(() => batchSettings({ storage: { prefix: 'a\\b' } })).toThrow(/prefix .* must not contain/);
    expect(() => batchSettings({ storage: { params: { key: 1 } } })).toThrow(/params is for remote storage/);
    expect(batchSettings({ storage: { prefix: 'report-', params: {} } })!.prefix).toBe('report-');
  });
});

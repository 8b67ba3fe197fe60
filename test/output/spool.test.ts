import { createHash, randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import zlib from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { fs } from '../../src/builtins.js';
import { Spool } from '../../src/output/spool.js';
import { spoolCodec, type SpoolCodec } from '../../src/output/spool-codec.js';
import { plainHeadLimit } from '../../src/output/spool-files.js';
import { removeDeadSpools } from '../../src/output/spool-leftovers.js';
import { LEASE_EXPIRY_MS } from '../../src/output/lease.js';
import { PID_SPACE, processStart } from '../../src/output/process-alive.js';
import { MessageWriter } from '../../src/output/writer.js';
import { tempFolder } from '../helpers/files.js';
import { age, OTHER_PID_SPACE } from '../helpers/leases.js';
import { deadPid } from '../helpers/processes.js';

/** The codec of this Node (zstd from Node 22.15 on), and gzip as on a Node without zstd. */
const CODECS: ReadonlyArray<[string, SpoolCodec]> = [
  ['this Node\'s', spoolCodec()],
  ['the gzip fallback', spoolCodec({ createGzip: zlib.createGzip, createGunzip: zlib.createGunzip })],
];
const FILE = spoolCodec().file;

/**
 * A spool of `lines` records, all compressed unless `plainBytes` says how
 * many bytes stay plain (the tests of the codecs are the tests of the
 * compressed part; those of the plain head say so).
 */
async function spoolOf(lines: number, codec?: SpoolCodec, line = (i: number) => `{"type":"RECORD","n":${i}}`, plainBytes = 0): Promise<{ spool: Spool; directory: string; removeOnStop: Set<string> }> {
  const directory = tempFolder('spool-test-');
  const removeOnStop = new Set<string>();
  const spool = await Spool.open({ directory, maxBytes: 1 << 30, removeOnStop, codec, plainBytes });
  for (let i = 0; i < lines; i++) {
    spool.line(line(i));
    if (spool.full) await spool.drain();
  }
  return { spool, directory, removeOnStop };
}

/** A writer whose output is collected. */
function collector(): { writer: MessageWriter; text: () => string } {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  // Copied: the writer reuses its blocks once they are written.
  out.on('data', (chunk: Buffer) => chunks.push(Buffer.from(chunk)));
  return { writer: new MessageWriter(out), text: () => Buffer.concat(chunks).toString('utf8') };
}

describe('Spool', () => {
  it.each(CODECS)('holds the records in a private folder (0700, the files 0600) with its lease, checks them, and replays them byte for byte (%s codec)', async (_name, codec) => {
    const { spool, directory, removeOnStop } = await spoolOf(20_000, codec);
    const [name] = readdirSync(directory);
    expect(name).toMatch(new RegExp(`^tap-report-dump-spool-${PID_SPACE}-${process.pid}-${processStart()}-[A-Za-z0-9]{6}$`));
    expect(removeOnStop).toEqual(new Set([join(directory, name)]));
    await spool.complete();
    expect(statSync(join(directory, name)).mode & 0o777).toBe(0o700);
    expect(readdirSync(join(directory, name)).sort()).toEqual(['lease', codec.file]);
    expect(statSync(join(directory, name, codec.file)).mode & 0o777).toBe(0o600);
    expect(statSync(join(directory, name, 'lease')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(directory, name, 'lease'), 'utf8')).toMatch(/^\{"tap":"tap-report-dump","lease":"written every 5 s while the run that holds this spool lives"\}\n$/);
    await spool.verify(20_000);
    expect(spool.bytes).toBeLessThan(200_000);
    const { writer, text } = collector();
    await spool.replay(writer);
    await writer.end();
    expect(text()).toBe(Array.from({ length: 20_000 }, (_, i) => `{"type":"RECORD","n":${i}}\n`).join(''));
    expect(spool.replayed).toBe(20_000);
    await spool.discard();
    expect(readdirSync(directory)).toEqual([]);
    expect(removeOnStop.size).toBe(0);
  });

  it('compresses with zstd where this Node has it (its file says so), and with gzip where it has not', async () => {
    const zstd = typeof (zlib as Partial<typeof zlib>).createZstdCompress === 'function';
    expect(spoolCodec().file).toBe(zstd ? 'records.jsonl.zst' : 'records.jsonl.gz');
    expect(spoolCodec({ createGzip: zlib.createGzip, createGunzip: zlib.createGunzip }).file).toBe('records.jsonl.gz');
    const { spool, directory } = await spoolOf(10);
    await spool.complete();
    const [name] = readdirSync(directory);
    expect(readdirSync(join(directory, name)).sort()).toEqual(['lease', spoolCodec().file]);
    await spool.discard();
  });

  it.each(CODECS)('fails to send a spool whose bytes changed on disk after its check (%s codec)', async (_name, codec) => {
    // Records of random text: stored as they are, so a changed byte changes a record unless the codec checks a checksum.
    const { spool, directory } = await spoolOf(2000, codec, (i) => `{"n":${i},"noise":"${randomBytes(48).toString('base64')}"}`);
    await spool.complete();
    await spool.verify(2000);
    const path = join(directory, readdirSync(directory)[0], codec.file);
    const size = statSync(path).size;
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.from([readFileSync(path)[size >> 1] ^ 0x01]), 0, 1, size >> 1);
    closeSync(fd);
    const { writer } = collector();
    await expect(spool.replay(writer)).rejects.toThrow();
    await spool.discard();
  });

  it('fails its check when it holds other records than the reads admitted, or its file is not every byte written', async () => {
    const { spool, directory } = await spoolOf(10);
    await spool.complete();
    await expect(spool.verify(11)).rejects.toThrow(/holds 10 records in \d+ bytes where 11 records in \d+ bytes were written: the pass was stopped and nothing was deleted/);
    const [name] = readdirSync(directory);
    truncateSync(join(directory, name, FILE), 5);
    await expect(spool.verify(10)).rejects.toThrow(/holds 10 records in 5 bytes where 10 records in \d+ bytes were written/);
    await spool.discard();
  });

  it('stops a pass that passes spool_max_mb, naming the setting', async () => {
    const directory = tempFolder('spool-test-');
    const spool = await Spool.open({ directory, maxBytes: 50_000, removeOnStop: new Set(), plainBytes: 0 });
    let error: unknown;
    try {
      for (let i = 0; i < 200_000; i++) {
        spool.line(`{"type":"RECORD","n":${i},"noise":"${createHash('sha256').update(String(i)).digest('hex')}"}`);
        if (spool.full) await spool.drain();
      }
    } catch (caught) {
      error = caught;
    }
    expect(String(error)).toMatch(/The full pass's spool passed spool_max_mb \(0 MB on disk, after \d+ records\): the pass was stopped and nothing was deleted\. Raise spool_max_mb/);
    await spool.discard();
    expect(readdirSync(directory)).toEqual([]);
  });

  it('keeps the first records plain up to its bound and compresses the rest: two private files, checked, replayed in order byte for byte', async () => {
    const lines = (count: number): string => Array.from({ length: count }, (_, i) => `{"type":"RECORD","n":${i}}\n`).join('');
    // Records go to the files a writer's block (1 MiB of whole lines) at a time: 5.6 MB of records, 2 MiB kept plain.
    const { spool, directory } = await spoolOf(200_000, undefined, undefined, 2 * 1_048_576);
    await spool.complete();
    const folder = join(directory, readdirSync(directory)[0]);
    expect(readdirSync(folder).sort()).toEqual(['lease', 'records.jsonl', FILE].sort());
    expect(statSync(join(folder, 'records.jsonl')).mode & 0o777).toBe(0o600);
    expect(statSync(join(folder, FILE)).mode & 0o777).toBe(0o600);
    const head = readFileSync(join(folder, 'records.jsonl'), 'utf8');
    expect(head.length).toBeGreaterThan(0);
    expect(head.length).toBeLessThanOrEqual(2 * 1_048_576);
    expect(lines(200_000).startsWith(head)).toBe(true);
    expect(spool.compressed).toBe(true);
    await spool.verify(200_000);
    const { writer, text } = collector();
    await spool.replay(writer);
    await writer.end();
    expect(text()).toBe(lines(200_000));
    expect(spool.replayed).toBe(200_000);
    await spool.discard();
  });

  it('keeps a pass within its bound in one plain file, and makes no file for an empty pass', async () => {
    const small = await spoolOf(100, undefined, undefined, 1 << 20);
    await small.spool.complete();
    const folder = join(small.directory, readdirSync(small.directory)[0]);
    expect(readdirSync(folder).sort()).toEqual(['lease', 'records.jsonl']);
    expect(small.spool.compressed).toBe(false);
    await small.spool.verify(100);
    const { writer, text } = collector();
    await small.spool.replay(writer);
    await writer.end();
    expect(text().split('\n')).toHaveLength(101);
    await small.spool.discard();

    const empty = await spoolOf(0, undefined, undefined, 1 << 20);
    await empty.spool.complete();
    expect(readdirSync(join(empty.directory, readdirSync(empty.directory)[0]))).toEqual(['lease']);
    await empty.spool.verify(0);
    const out = collector();
    await empty.spool.replay(out.writer);
    await out.writer.end();
    expect(out.text()).toBe('');
    await empty.spool.discard();
  });

  it('fails to send a spool whose plain part changed on disk after its check, or whose plain file is not every byte written', async () => {
    const { spool, directory } = await spoolOf(2000, undefined, (i) => `{"n":${i},"noise":"${randomBytes(48).toString('base64')}"}`, 1 << 20);
    await spool.complete();
    await spool.verify(2000);
    const path = join(directory, readdirSync(directory)[0], 'records.jsonl');
    const size = statSync(path).size;
    const fd = openSync(path, 'r+');
    // A changed byte in a record's noise: the same line count, the same size, other data.
    writeSync(fd, Buffer.from([readFileSync(path)[size >> 1] ^ 0x01]), 0, 1, size >> 1);
    closeSync(fd);
    const { writer } = collector();
    await expect(spool.replay(writer)).rejects.toThrow(/the spool's plain part changed on disk after it was written/);
    await spool.discard();

    const cut = await spoolOf(10, undefined, undefined, 1 << 20);
    await cut.spool.complete();
    truncateSync(join(cut.directory, readdirSync(cut.directory)[0], 'records.jsonl'), 5);
    await expect(cut.spool.verify(10)).rejects.toThrow(/holds 10 records in 5 bytes where 10 records in \d+ bytes were written/);
    await cut.spool.discard();
  });

  it('stops the pass when the disk refuses its plain part (full), naming spool_directory; nothing is left', async () => {
    const directory = tempFolder('spool-test-');
    const spool = await Spool.open({ directory, maxBytes: 1 << 30, removeOnStop: new Set(), plainBytes: 1 << 30 });
    const write = vi.spyOn(fs, 'writeSync').mockImplementation(() => {
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    });
    let error: unknown;
    try {
      for (let i = 0; i < 100_000; i++) {
        spool.line(`{"type":"RECORD","n":${i}}`);
        if (spool.full) await spool.drain();
      }
      await spool.complete();
    } catch (caught) {
      error = caught;
    } finally {
      write.mockRestore();
    }
    expect(String(error)).toMatch(/Cannot write the full pass's spool in .* \(ENOSPC\): the disk is full; the pass was stopped and nothing was deleted\. Set spool_directory to a disk with room\./);
    await spool.discard();
    expect(readdirSync(directory)).toEqual([]);
  });

  it('sends the records it checked even when its folder is removed after the check', async () => {
    const { spool, directory } = await spoolOf(1000);
    await spool.complete();
    await spool.verify(1000);
    rmSync(join(directory, readdirSync(directory)[0]), { recursive: true });
    const { writer, text } = collector();
    await spool.replay(writer);
    await writer.end();
    expect(text().split('\n')).toHaveLength(1001);
    await spool.discard();
  });

  it('fails its check, naming the spool, when another run removed it (taking this one for dead), sending nothing', async () => {
    const { spool, directory } = await spoolOf(10);
    await spool.complete();
    rmSync(join(directory, readdirSync(directory)[0]), { recursive: true });
    await expect(spool.verify(10)).rejects.toThrow(new RegExp(`The full pass's spool .*${FILE.replaceAll('.', '\\.')} cannot be read back \\(ENOENT\\): the pass was stopped and nothing was deleted\\. If it is gone, another run took this one for dead`));
    await spool.discard();
  });

  it('removes dead runs\' spools as it opens, never its own', async () => {
    const directory = tempFolder('spool-test-');
    const dead = join(directory, `tap-report-dump-spool-${OTHER_PID_SPACE}-1234-1700000000-AbC123`);
    mkdirSync(dead);
    age(dead, LEASE_EXPIRY_MS + 60_000);
    const spool = await Spool.open({ directory, maxBytes: 1 << 20, removeOnStop: new Set() });
    expect(readdirSync(directory)).toEqual([expect.stringMatching(new RegExp(`^tap-report-dump-spool-${PID_SPACE}-${process.pid}-`))]);
    await spool.discard();
  });

  it('names spool_directory when it cannot make its folder there', async () => {
    const blocker = join(tempFolder('spool-test-'), 'a-file');
    writeFileSync(blocker, '');
    await expect(Spool.open({ directory: blocker, maxBytes: 1 << 20, removeOnStop: new Set() })).rejects.toThrow(/Cannot make the full pass's spool folder in .*a-file \(ENOTDIR\); set spool_directory to a directory this user can write\. Nothing was deleted\./);
  });
});

describe('removeDeadSpools', () => {
  /** The tag of this host in spool folder names before leases: its host name alone. */
  const oldTag = createHash('sha1').update(hostname()).digest('hex').slice(0, 8);
  const expired = LEASE_EXPIRY_MS + 60_000;

  /** Spool folders by name, each with a records file, in a fresh directory. */
  function spools(names: Record<string, string>): string {
    const directory = tempFolder('spool-test-');
    for (const name of Object.values(names)) {
      mkdirSync(join(directory, name));
      writeFileSync(join(directory, name, 'records.jsonl.gz'), 'x');
    }
    return directory;
  }

  it('removes the spool folders of dead processes of this pid space at once, whatever their lease, and keeps live ones', () => {
    const dead = deadPid();
    const alive = process.pid === 1 ? 2 : 1;
    const names = {
      dead: `tap-report-dump-spool-${PID_SPACE}-${dead}-1700000000-AbC123`,
      ourIdEarlier: `tap-report-dump-spool-${PID_SPACE}-${process.pid}-${processStart() - 3600}-AbC123`,
      ours: `tap-report-dump-spool-${PID_SPACE}-${process.pid}-${processStart()}-AbC123`,
      alive: `tap-report-dump-spool-${PID_SPACE}-${alive}-1700000000-AbC123`,
      otherHost: `tap-report-dump-spool-${OTHER_PID_SPACE}-${dead}-1700000000-AbC123`,
      other: 'tap-report-dump-spool-notes',
    };
    const directory = spools(names);
    age(join(directory, names.ours), expired);
    age(join(directory, names.alive), expired);
    expect(removeDeadSpools(directory)).toBe(2);
    expect(existsSync(join(directory, names.dead))).toBe(false);
    expect(readdirSync(directory).sort()).toEqual([names.ours, names.alive, names.otherHost, names.other].sort());
  });

  it('removes those of another host (or of versions before leases) once nothing in them was written for LEASE_EXPIRY_MS, and only those', () => {
    const names = {
      expired: `tap-report-dump-spool-${OTHER_PID_SPACE}-${process.pid}-${processStart()}-AbC123`,
      renewed: `tap-report-dump-spool-${OTHER_PID_SPACE}-7-1700000000-AbC123`,
      oldExpired: `tap-report-dump-spool-${oldTag}-${process.pid}-${processStart()}-AbC123`,
      oldWriting: `tap-report-dump-spool-${oldTag}-8-1700000000-AbC123`,
      young: `tap-report-dump-spool-${OTHER_PID_SPACE}-9-1700000000-AbC123`,
    };
    const directory = spools(names);
    for (const name of Object.values(names)) age(join(directory, name), expired);
    // Written within the lease: the lease file, the records file, the folder itself.
    writeFileSync(join(directory, names.renewed, 'lease'), '{}');
    writeFileSync(join(directory, names.oldWriting, 'records.jsonl.gz'), 'xx');
    age(join(directory, names.young), LEASE_EXPIRY_MS - 60_000);
    expect(removeDeadSpools(directory)).toBe(2);
    expect(readdirSync(directory).sort()).toEqual([names.renewed, names.oldWriting, names.young].sort());
  });

  it('reads leases by the volume\'s clock, the time of the run\'s own lease file, not this host\'s', () => {
    const own = `tap-report-dump-spool-${PID_SPACE}-${process.pid}-${processStart()}-Own123`;
    const other = `tap-report-dump-spool-${OTHER_PID_SPACE}-7-1700000000-AbC123`;
    const directory = spools({ own, other });
    const lease = join(directory, own, 'lease');
    writeFileSync(lease, '{}');
    // The volume's clock behind this host's by two leases: by this host's clock, the other run's lease expired.
    age(lease, 2 * LEASE_EXPIRY_MS);
    age(join(directory, other), 2 * LEASE_EXPIRY_MS);
    expect(removeDeadSpools(directory, { folder: join(directory, own), lease })).toBe(0);
    // The volume's clock ahead: a lease this host takes for fresh has expired.
    age(lease, -LEASE_EXPIRY_MS - 60_000);
    age(join(directory, other), 0);
    expect(removeDeadSpools(directory, { folder: join(directory, own), lease })).toBe(1);
    expect(readdirSync(directory)).toEqual([own]);
  });
});

describe('plainHeadLimit', () => {
  const GiB = 1024 ** 3;
  const disk = (room: number, type = 0xef53) => () => ({ type, bsize: 4096, bavail: room / 4096 });

  it('keeps up to 1 GiB plain on a disk with room, at most a tenth of its room and a quarter of spool_max_mb', () => {
    expect(plainHeadLimit('/spool', 8 * GiB, disk(100 * GiB))).toBe(GiB);
    expect(plainHeadLimit('/spool', 8 * GiB, disk(2 * GiB))).toBe(Math.floor((2 * GiB) / 10));
    expect(plainHeadLimit('/spool', 100 * 1_048_576, disk(100 * GiB))).toBe(25 * 1_048_576);
  });

  it('keeps nothing plain on a file system held in memory (tmpfs, ramfs), or where the directory cannot be asked', () => {
    expect(plainHeadLimit('/tmp', 8 * GiB, disk(100 * GiB, 0x01021994))).toBe(0);
    expect(plainHeadLimit('/tmp', 8 * GiB, disk(100 * GiB, 0x858458f6))).toBe(0);
    const gone = (): never => {
      throw Object.assign(new Error('gone'), { code: 'ENOENT' });
    };
    expect(plainHeadLimit('/gone', 8 * GiB, gone)).toBe(0);
  });

  it('asks the real file system by default', () => {
    const limit = plainHeadLimit(tempFolder('spool-test-'), 8 * GiB);
    expect(limit).toBeGreaterThanOrEqual(0);
    expect(limit).toBeLessThanOrEqual(GiB);
  });
});

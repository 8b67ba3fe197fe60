import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { removeDeadSpools, Spool } from '../../src/output/spool.js';
import { processStart } from '../../src/output/process-alive.js';
import { MessageWriter } from '../../src/output/writer.js';
import { tempFolder } from '../helpers/files.js';
import { deadPid } from '../helpers/processes.js';

async function spoolOf(lines: number, maxBytes = 1 << 30): Promise<{ spool: Spool; directory: string; removeOnStop: Set<string> }> {
  const directory = tempFolder('spool-test-');
  const removeOnStop = new Set<string>();
  const spool = await Spool.open({ directory, maxBytes, removeOnStop });
  for (let i = 0; i < lines; i++) {
    spool.line(`{"type":"RECORD","n":${i}}`);
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
  it('holds the records in a private folder (0700, the file 0600), checks them, and replays them byte for byte', async () => {
    const { spool, directory, removeOnStop } = await spoolOf(20_000);
    const [name] = readdirSync(directory);
    expect(name).toMatch(new RegExp(`^tap-report-dump-spool-[0-9a-f]{8}-${process.pid}-${processStart()}-[A-Za-z0-9]{6}$`));
    expect(removeOnStop).toEqual(new Set([join(directory, name)]));
    await spool.complete();
    expect(statSync(join(directory, name)).mode & 0o777).toBe(0o700);
    expect(statSync(join(directory, name, 'records.jsonl.gz')).mode & 0o777).toBe(0o600);
    await spool.verify(20_000);
    expect(spool.bytes).toBeLessThan(200_000);
    const { writer, text } = collector();
    await spool.replay(writer);
    await writer.end();
    expect(text()).toBe(Array.from({ length: 20_000 }, (_, i) => `{"type":"RECORD","n":${i}}\n`).join(''));
    await spool.discard();
    expect(readdirSync(directory)).toEqual([]);
    expect(removeOnStop.size).toBe(0);
  });

  it('fails its check when it holds other records than the reads admitted, or its file is not every byte written', async () => {
    const { spool, directory } = await spoolOf(10);
    await spool.complete();
    await expect(spool.verify(11)).rejects.toThrow(/holds 10 records in \d+ bytes where 11 records in \d+ bytes were written: the pass was stopped and nothing was deleted/);
    const [name] = readdirSync(directory);
    truncateSync(join(directory, name, 'records.jsonl.gz'), 5);
    await expect(spool.verify(10)).rejects.toThrow(/holds 10 records in 5 bytes where 10 records in \d+ bytes were written/);
    await spool.discard();
  });

  it('stops a pass that passes spool_max_mb, naming the setting', async () => {
    const directory = tempFolder('spool-test-');
    const spool = await Spool.open({ directory, maxBytes: 50_000, removeOnStop: new Set() });
    let error: unknown;
    try {
      for (let i = 0; i < 200_000; i++) {
        spool.line(`{"type":"RECORD","n":${i},"noise":"${createHash('sha256').update(String(i)).digest('hex')}"}`);
        if (spool.full) await spool.drain();
      }
    } catch (caught) {
      error = caught;
    }
    expect(String(error)).toMatch(/The full pass's spool passed spool_max_mb \(0 MB compressed, after \d+ records\): the pass was stopped and nothing was deleted\. Raise spool_max_mb/);
    await spool.discard();
    expect(readdirSync(directory)).toEqual([]);
  });

  it('names spool_directory when it cannot make its folder there', async () => {
    const blocker = join(tempFolder('spool-test-'), 'a-file');
    writeFileSync(blocker, '');
    await expect(Spool.open({ directory: blocker, maxBytes: 1 << 20, removeOnStop: new Set() })).rejects.toThrow(/Cannot make the full pass's spool folder in .*a-file \(ENOTDIR\); set spool_directory to a directory this user can write\. Nothing was deleted\./);
  });
});

describe('removeDeadSpools', () => {
  const tag = createHash('sha1').update(hostname()).digest('hex').slice(0, 8);

  it('removes the spool folders of dead runs on this host, and only those', () => {
    const directory = tempFolder('spool-test-');
    const dead = deadPid();
    const alive = process.pid === 1 ? 2 : 1;
    const names = {
      dead: `tap-report-dump-spool-${tag}-${dead}-1700000000-AbC123`,
      ourIdEarlier: `tap-report-dump-spool-${tag}-${process.pid}-${processStart() - 3600}-AbC123`,
      ours: `tap-report-dump-spool-${tag}-${process.pid}-${processStart()}-AbC123`,
      alive: `tap-report-dump-spool-${tag}-${alive}-1700000000-AbC123`,
      otherHost: `tap-report-dump-spool-00000000-${dead}-1700000000-AbC123`,
      other: 'tap-report-dump-spool-notes',
    };
    for (const name of Object.values(names)) mkdirSync(join(directory, name));
    writeFileSync(join(directory, names.dead, 'records.jsonl.gz'), 'x');
    expect(removeDeadSpools(directory)).toBe(2);
    expect(existsSync(join(directory, names.dead))).toBe(false);
    expect(readdirSync(directory).sort()).toEqual([names.ours, names.alive, names.otherHost, names.other].sort());
  });
});

import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { fakeSignalHost } from '../../helpers/signal-host.js';
import { LAST_LINES_WAIT_MS, StopSignals, type StopOutput } from '../../../src/sync/stop/stop-signals.js';
import { createLogger } from '../../../src/observe/log.js';
import { tempFolder } from '../../helpers/files.js';

/** What a stop signal does to a run: at once, or, after ACTIVATE_VERSION, once every record of the pass has left the process. */

/** A promise and its resolve, for steps the test lets happen. */
function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** stdout as a stop sees it: `flushed` as given; `cutShort` as a protocol with status lines (Airbyte) or none (Singer); the sealed lines kept. */
function output(flushed: () => Promise<void> = () => Promise.resolve(), statusLines = false, sendQueued: () => void = () => undefined): StopOutput & { sealed: string[][] } {
  const sealed: string[][] = [];
  return {
    flushed,
    lastWords: statusLines ? (stream) => (stream === undefined ? [] : [`${stream} INCOMPLETE`]) : undefined,
    seal: (last) => void sealed.push([...last]),
    sendQueued,
    sealed,
  };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function held(): { path: string; unannounced: Set<string> } {
  const path = join(tempFolder('stop-'), 'spool');
  writeFileSync(path, 'records');
  return { path, unannounced: new Set([path]) };
}

describe('a stop signal', () => {
  it('outside the unstoppable stretch removes what the run holds and ends the process by that signal at once', () => {
    const host = fakeSignalHost();
    const { path, unannounced } = held();
    new StopSignals(unannounced, undefined, createLogger({ write: () => undefined }), output(), host);
    host.emit('SIGTERM');
    expect(host.ended).toEqual(['SIGTERM']);
    expect(existsSync(path)).toBe(false);
    expect(host.listeners()).toBe(0);
  });

  it('after ACTIVATE_VERSION waits for the work to end and for stdout to have passed everything on, says what it waits for, then ends the process', async () => {
    const host = fakeSignalHost();
    const { path, unannounced } = held();
    const lines: string[] = [];
    const flushed = gate();
    const stop = new StopSignals(unannounced, undefined, createLogger({ format: 'json', write: (line) => void lines.push((JSON.parse(line) as { message: string }).message) }), output(() => flushed.promise), host);
    const work = gate();
    let left = 40;
    void stop.unstoppable(() => `the ${left} records of the pass still to be sent`, () => work.promise);
    host.emit('SIGTERM');
    left = 10;
    host.emit('SIGINT');
    await tick();
    expect(host.ended).toEqual([]);
    expect(lines).toEqual([
      expect.stringContaining('SIGTERM received after ACTIVATE_VERSION: the stop waits for the 40 records of the pass still to be sent'),
      expect.stringContaining('SIGINT received again after ACTIVATE_VERSION: the stop waits for the 10 records'),
    ]);
    work.open();
    await tick();
    // The work is done, but stdout has not passed its last bytes on yet.
    expect(host.ended).toEqual([]);
    expect(existsSync(path)).toBe(true);
    flushed.open();
    await tick();
    expect(host.ended).toEqual(['SIGTERM']);
    expect(existsSync(path)).toBe(false);
    expect(lines.at(-1)).toMatch(/^stopping for SIGTERM now that the full pass is sent; the state was not advanced/);
  });

  it('that did not come during the stretch leaves the run going, and uninstall gives signals back', async () => {
    const host = fakeSignalHost();
    const stop = new StopSignals(new Set(), undefined, createLogger({ write: () => undefined }), output(), host);
    await expect(stop.unstoppable(() => '', () => Promise.resolve(7))).resolves.toBe(7);
    expect(host.ended).toEqual([]);
    stop.uninstall();
    expect(host.listeners()).toBe(0);
  });

  describe('with a protocol that says a stream was cut short (Airbyte)', () => {
    const quiet = createLogger({ write: () => undefined });
    /** A stop whose stdout speaks (status lines), flushed when `flushed` resolves (never, by default). */
    const airbyteStop = (flushed: () => Promise<void> = () => new Promise(() => undefined)) => {
      const host = fakeSignalHost();
      const out = output(flushed, true);
      return { host, out, stop: new StopSignals(new Set(), undefined, quiet, out, host) };
    };

    it('seals stdout with the unfinished stream\'s INCOMPLETE line, and ends the process once that line reached the pipe', async () => {
      const flushed = gate();
      const { host, out, stop } = airbyteStop(() => flushed.promise);
      stop.progress.began('training');
      stop.progress.finished(3);
      stop.progress.began('phishing');
      host.emit('SIGTERM');
      expect(out.sealed).toEqual([['phishing INCOMPLETE']]);
      await tick();
      expect(host.ended).toEqual([]);
      flushed.open();
      await tick();
      expect(host.ended).toEqual(['SIGTERM']);
    });

    it('a target that takes nothing holds the stop up at most LAST_LINES_WAIT_MS; a second signal meanwhile stops at once', async () => {
      vi.useFakeTimers();
      try {
        const { host, stop } = airbyteStop();
        stop.progress.began('training');
        host.emit('SIGTERM');
        await vi.advanceTimersByTimeAsync(LAST_LINES_WAIT_MS - 1);
        expect(host.ended).toEqual([]);
        await vi.advanceTimersByTimeAsync(1);
        expect(host.ended).toEqual(['SIGTERM']);

        const { host: again, stop: second } = airbyteStop();
        second.progress.began('training');
        again.emit('SIGTERM');
        again.emit('SIGINT');
        expect(again.ended).toEqual(['SIGINT']);
      } finally {
        vi.useRealTimers();
      }
    });

    it('without status lines (Singer), stops at once and seals nothing, in a stream or not', () => {
      for (const begun of [true, false]) {
        const host = fakeSignalHost();
        const out = output(() => new Promise(() => undefined), false);
        const stop = new StopSignals(new Set(), undefined, quiet, out, host);
        if (begun) stop.progress.began('training');
        host.emit('SIGTERM');
        expect(host.ended).toEqual(['SIGTERM']);
        expect(out.sealed).toEqual([]);
      }
    });

    it('between streams, seals stdout with no line of its own and ends once the stop\'s log line and the STATE before it reached the pipe', async () => {
      const flushed = gate();
      const { host, out, stop } = airbyteStop(() => flushed.promise);
      stop.progress.began('training');
      stop.progress.finished(3);
      host.emit('SIGTERM');
      expect(out.sealed).toEqual([[]]);
      await tick();
      expect(host.ended).toEqual([]);
      flushed.open();
      await tick();
      expect(host.ended).toEqual(['SIGTERM']);
    });

    it('after a stream failed (its INCOMPLETE already sent), a stop sends no second one', () => {
      const { host, out, stop } = airbyteStop();
      stop.progress.began('training');
      stop.progress.failed();
      host.emit('SIGTERM');
      expect(out.sealed).toEqual([[]]);
    });

    it('the run it stopped neither returns nor fails meanwhile; a run no signal stopped goes on', async () => {
      const { host, stop } = airbyteStop();
      await expect(stop.ended()).resolves.toBeUndefined();
      stop.progress.began('training');
      host.emit('SIGTERM');
      let returned = false;
      void stop.ended().then(() => (returned = true));
      await tick();
      expect(returned).toBe(false);
    });
  });

  describe('the line it leaves', () => {
    /** The writer's counts as the test sets them. */
    const counts = { queued: 0, written: 0, handed: 0 };
    const stopLines = (run: (stop: StopSignals) => void, signal: NodeJS.Signals = 'SIGTERM', statusLines = false): string[] => {
      const host = fakeSignalHost();
      const lines: string[] = [];
      // The writer hands what it queued over (Airbyte: the stop's log and last line go to stdout and take the queued records with them).
      const out = { ...output(() => Promise.resolve(), statusLines, () => void (counts.handed = counts.queued)), counts: { queued: () => counts.queued, written: () => counts.written, handed: () => Math.max(counts.handed, counts.written) } };
      const stop = new StopSignals(new Set(), undefined, createLogger({ format: 'json', write: (line) => void lines.push((JSON.parse(line) as { message: string }).message) }), out, host);
      run(stop);
      host.emit(signal);
      if (!statusLines) expect(host.ended).toEqual([signal]);
      return lines;
    };

    it('names the signal, the stream, the records read so far and those of them written to stdout, those of streams finished before, and that the state was not advanced', () => {
      let records = 0;
      const lines = stopLines((stop) => {
        counts.queued = 0;
        stop.progress.reading('training', () => 300, 'sent');
        counts.queued = 300;
        stop.progress.finished(300);
        stop.progress.reading('phishing', () => records, 'sent');
        records = 42;
        counts.queued = 342;
        counts.written = 310;
      });
      expect(lines).toEqual([
        'stopping for SIGTERM during phishing: 42 records of it read so far, 10 of them written to stdout; 1 stream finished before it (300 records, STATE sent); the state was not advanced for phishing, so its next run reads from the same bookmark',
      ]);
    });

    it('after a STATE checkpoint of the stream it was in (Airbyte, between reads), says the state went as far as that STATE, not that it was not advanced', () => {
      const lines = stopLines((stop) => {
        counts.queued = 0;
        counts.written = 0;
        stop.progress.reading('training', () => 500, 'sent');
        counts.queued = 420;
        stop.progress.checkpointed(420);
        counts.queued = 500;
        counts.written = 500;
      });
      expect(lines).toEqual([
        'stopping for SIGTERM during training: 500 records of it read so far, 500 of them written to stdout; the state of training went as far as its last STATE checkpoint (after 420 of them), so its next run resumes from there',
      ]);
    });

    it('counts none of the stream written while the writer still holds its records (nor those of the stream before)', () => {
      const lines = stopLines((stop) => {
        counts.queued = 300;
        counts.written = 250;
        stop.progress.reading('phishing', () => 174, 'sent');
        counts.queued = 474;
      });
      expect(lines).toEqual([expect.stringMatching(/^stopping for SIGTERM during phishing: 174 records of it read so far, 0 of them written to stdout; /)]);
    });

    it('on a face whose stop sends last lines (Airbyte), counts the records its log line takes out with it as handed over', () => {
      const lines = stopLines(
        (stop) => {
          counts.queued = 0;
          counts.written = 0;
          counts.handed = 0;
          stop.progress.began('training');
          stop.progress.reading('training', () => 3, 'sent');
          counts.queued = 3;
        },
        'SIGTERM',
        true,
      );
      expect(lines).toEqual([expect.stringMatching(/^stopping for SIGTERM during training: 3 records of it read so far, 0 to 3 of them written to stdout; /)]);
    });

    it('never says more were written than read (the read count lags a chunk; the writer counts each record as it goes)', () => {
      const lines = stopLines((stop) => {
        counts.queued = 0;
        counts.written = 0;
        counts.handed = 0;
        stop.progress.reading('training', () => 370, 'sent');
        counts.queued = 441;
        counts.written = 441;
      });
      expect(lines).toEqual([expect.stringMatching(/^stopping for SIGTERM during training: 370 records of it read so far, 370 of them written to stdout; /)]);
    });

    it('gives a range when the stop cuts a write short (a full pipe took part of it)', () => {
      const lines = stopLines((stop) => {
        counts.queued = 0;
        counts.written = 0;
        stop.progress.reading('training', () => 900, 'sent');
        counts.queued = 900;
        counts.written = 100;
        counts.handed = 800;
      });
      expect(lines).toEqual([expect.stringMatching(/^stopping for SIGTERM during training: 900 records of it read so far, 100 to 800 of them written to stdout; /)]);
    });

    it('releases what the run holds (the change store\'s locks) before the process ends', () => {
      const released: string[] = [];
      stopLines((stop) => stop.releaseOnStop(() => void released.push('locks')));
      expect(released).toEqual(['locks']);
    });

    it('a full pass held back says none of it was sent, until it was released; a stop between streams says so', () => {
      expect(stopLines((stop) => stop.progress.reading('training', () => 120, 'held'), 'SIGINT')).toEqual([
        'stopping for SIGINT during training: 120 records of its full pass read and held back, none sent (what was held is removed); the state was not advanced for training, so its next run reads from the same bookmark',
      ]);
      expect(stopLines((stop) => {
        stop.progress.reading('training', () => 120, 'held');
        stop.progress.released();
      })).toEqual([expect.stringMatching(/^stopping for SIGTERM during training: 120 records of it read so far, \d+ of them written to stdout; the state was not advanced/)]);
      expect(stopLines((stop) => {
        stop.progress.reading('training', () => 7, 'compared');
        stop.progress.finished(7);
      })).toEqual(['stopping for SIGTERM between streams: 1 stream finished (7 records, STATE sent)']);
    });
  });
});


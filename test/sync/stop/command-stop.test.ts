import { describe, expect, it } from 'vitest';
import { fakeSignalHost } from '../../helpers/signal-host.js';
import { stoppableStep } from '../../../src/sync/stop/command-stop.js';
import { createLogger } from '../../../src/observe/log.js';

/** A command's step outside the sync (discovery, a check), stopped by a signal. */

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function logged(): { lines: string[]; logger: ReturnType<typeof createLogger> } {
  const lines: string[] = [];
  return { lines, logger: createLogger({ format: 'json', write: (line) => void lines.push((JSON.parse(line) as { message: string }).message) }) };
}

describe('a step outside the sync', () => {
  it('stopped by a signal logs one warning naming the signal and what it cut short, then ends the process by that signal; the step neither returns nor fails', async () => {
    const host = fakeSignalHost();
    const { lines, logger } = logged();
    let answer!: (value: string) => void;
    let settled = false;
    void stoppableStep({ doing: 'while discovering the streams (no catalog was written)', logger, host }, () => new Promise<string>((resolve) => (answer = resolve))).finally(() => (settled = true));
    host.emit('SIGTERM');
    await tick();
    expect(lines).toEqual(['stopping for SIGTERM while discovering the streams (no catalog was written)']);
    expect(host.ended).toEqual(['SIGTERM']);
    expect(host.listeners()).toBe(0);
    answer('catalog');
    await tick();
    expect(settled).toBe(false);
  });

  it('waits for the line to reach stdout where logs travel there; a second signal meanwhile ends the process at once', async () => {
    const host = fakeSignalHost();
    const { logger } = logged();
    void stoppableStep({ doing: 'while checking the connection', logger, host, flushed: () => new Promise<void>(() => undefined) }, () => new Promise<void>(() => undefined));
    host.emit('SIGTERM');
    await tick();
    expect(host.ended).toEqual([]);
    host.emit('SIGINT');
    expect(host.ended).toEqual(['SIGINT']);
  });

  it('that no signal stopped returns its result and gives signals back (the sync installs its own)', async () => {
    const host = fakeSignalHost();
    const { lines, logger } = logged();
    expect(await stoppableStep({ doing: 'while discovering', logger, host }, () => Promise.resolve(7))).toBe(7);
    await expect(stoppableStep({ doing: 'while discovering', logger, host }, () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(host.listeners()).toBe(0);
    expect(lines).toEqual([]);
  });
});

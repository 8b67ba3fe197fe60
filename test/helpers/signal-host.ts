import { EventEmitter } from 'node:events';
import type { SignalHost } from '../../src/sync/stop/stop-signals.js';

/** A signal source and a process end the test can see: signals it emits, the signals the process was ended by, the handlers installed. */
export function fakeSignalHost(): SignalHost & { emit(signal: NodeJS.Signals): void; ended: NodeJS.Signals[]; listeners(): number } {
  const events = new EventEmitter();
  const ended: NodeJS.Signals[] = [];
  return {
    on: (signal, listener) => events.on(signal, listener),
    off: (signal, listener) => events.off(signal, listener),
    end: (signal) => void ended.push(signal),
    emit: (signal) => void events.emit(signal, signal),
    ended,
    listeners: () => ['SIGINT', 'SIGTERM', 'SIGHUP'].reduce((n, s) => n + events.listenerCount(s), 0),
  };
}

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Redactor } from '../../src/observe/redact.js';
import { Session } from '../../src/observe/session.js';
import { createLogger, StatusSlot, type LogLevel } from '../../src/observe/log.js';

const NOW = '2024-05-01T08:00:00.000Z';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date(NOW));
});
afterEach(() => {
  vi.useRealTimers();
});

/** A logger of the session that collects its lines instead of writing to stderr. */
function collect(session: Session): { lines: string[]; log: ReturnType<Session['logger']> } {
  const lines: string[] = [];
  return { lines, log: session.logger({ write: (line) => lines.push(line) }) };
}

describe('Redactor', () => {
  it('masks every registered secret, every time it occurs', () => {
    const redactor = new Redactor();
    redactor.add('tok-alpha-1');
    redactor.add('s3cr');
    expect(redactor.redact('Bearer tok-alpha-1 and s3cr, again tok-alpha-1')).toBe('Bearer *** and ***, again ***');
  });

  it('ignores secrets shorter than 4 characters, empty ones and undefined', () => {
    const redactor = new Redactor();
    redactor.add('abc');
    redactor.add('');
    redactor.add(undefined);
    expect(redactor.redact('abc abcd a')).toBe('abc abcd a');
  });

  it('leaves text without a secret unchanged', () => {
    const redactor = new Redactor();
    redactor.add('tok-alpha-1');
    expect(redactor.redact('nothing to hide')).toBe('nothing to hide');
    expect(new Redactor().redact('tok-alpha-1')).toBe('tok-alpha-1');
  });
});

describe('Session', () => {
  it('logs text lines at info level by default, with the time and a padded level', () => {
    const { lines, log } = collect(new Session());
    log.debug('not shown');
    log.info('hello', { stream: 'training' });
    log.warn('careful');
    expect(lines).toEqual([`${NOW} INFO  hello {"stream":"training"}\n`, `${NOW} WARN  careful\n`]);
  });

  it('masks the adopted access token in text lines, in the message and in the fields', () => {
    const session = new Session();
    session.adopt({ access_token: 'tok-SECRET-4711' });
    const { lines, log } = collect(session);
    log.error('HTTP 401 for Bearer tok-SECRET-4711', { header: 'Authorization: Bearer tok-SECRET-4711' });
    expect(lines).toEqual([`${NOW} ERROR HTTP 401 for Bearer *** {"header":"Authorization: Bearer ***"}\n`]);
  });

  it('writes JSON lines when the config asks for them, with the token masked', () => {
    const session = new Session();
    session.adopt({ access_token: 'tok-SECRET-4711', log_format: 'json' });
    const { lines, log } = collect(session);
    log.info('using tok-SECRET-4711', { stream: 'phishing', token: 'tok-SECRET-4711' });
    expect(lines).toEqual([`{"time":"${NOW}","level":"info","message":"using ***","stream":"phishing","token":"***"}\n`]);
  });

  it('honours the adopted log level', () => {
    const levels: LogLevel[] = ['debug', 'info', 'warn', 'error'];
    const written = (level: LogLevel): string[] => {
      const session = new Session();
      session.adopt({ log_level: level });
      const { lines, log } = collect(session);
      for (const l of levels) log[l](l);
      return lines.map((line) => line.slice(NOW.length + 1, NOW.length + 6).trim());
    };
    expect(written('debug')).toEqual(['DEBUG', 'INFO', 'WARN', 'ERROR']);
    expect(written('info')).toEqual(['INFO', 'WARN', 'ERROR']);
    expect(written('warn')).toEqual(['WARN', 'ERROR']);
    expect(written('error')).toEqual(['ERROR']);
  });

  it('keeps earlier settings that a later config does not name', () => {
    const session = new Session();
    session.adopt({ access_token: 'tok-first-1', log_format: 'json', log_level: 'warn' });
    session.adopt({ access_token: 'tok-second-2' });
    const { lines, log } = collect(session);
    log.info('hidden');
    log.warn('tok-first-1 tok-second-2');
    expect(lines).toEqual([`{"time":"${NOW}","level":"warn","message":"*** ***"}\n`]);
  });

  it('lets the logger options override the session\'s level and format', () => {
    const session = new Session();
    session.adopt({ log_level: 'error', log_format: 'json' });
    const lines: string[] = [];
    session.logger({ level: 'debug', format: 'text', write: (line) => lines.push(line) }).debug('shown');
    expect(lines).toEqual([`${NOW} DEBUG shown\n`]);
  });

  it('hands a sink the masked message without time or level prefix', () => {
    const session = new Session();
    session.adopt({ access_token: 'tok-SECRET-4711' });
    const seen: Array<[LogLevel, string]> = [];
    const log = session.logger({ sink: (level, message) => seen.push([level, message]) });
    log.warn('retrying with tok-SECRET-4711', { attempt: 2 });
    log.debug('below the level');
    expect(seen).toEqual([['warn', 'retrying with *** {"attempt":2}']]);
  });

  it('masks the token in redact()', () => {
    const session = new Session();
    session.adopt({ access_token: 'tok-SECRET-4711' });
    expect(session.redact('x tok-SECRET-4711 y')).toBe('x *** y');
  });

  it('writes fatalLine as a JSON object in json format, with the token masked', () => {
    const session = new Session();
    session.adopt({ access_token: 'tok-SECRET-4711', log_format: 'json' });
    const line = session.fatalLine('HTTP 401 with tok-SECRET-4711');
    expect(line).toBe(`{"time":"${NOW}","level":"error","message":"HTTP 401 with ***"}\n`);
    expect(JSON.parse(line)).toEqual({ time: NOW, level: 'error', message: 'HTTP 401 with ***' });
  });

  it('writes fatalLine as plain text in text format, before and after a config is adopted', () => {
    const session = new Session();
    expect(session.fatalLine('Cannot read config file x.json: ENOENT.')).toBe('Cannot read config file x.json: ENOENT.\n');
    session.adopt({ access_token: 'tok-SECRET-4711' });
    expect(session.fatalLine('bad tok-SECRET-4711')).toBe('bad ***\n');
  });

  it('does not share secrets or settings between two sessions', () => {
    const first = new Session();
    const second = new Session();
    first.adopt({ access_token: 'tok-first-1', log_format: 'json', log_level: 'error' });
    second.adopt({ access_token: 'tok-second-2' });
    expect(first.redact('tok-first-1 tok-second-2')).toBe('*** tok-second-2');
    expect(second.redact('tok-first-1 tok-second-2')).toBe('tok-first-1 ***');
    expect(second.fatalLine('done')).toBe('done\n');
    const { lines, log } = collect(second);
    log.info('tok-first-1');
    expect(lines).toEqual([`${NOW} INFO  tok-first-1\n`]);
    expect(new Session().redact('tok-first-1 tok-second-2')).toBe('tok-first-1 tok-second-2');
  });
});

describe('the logger and the status line', () => {
  it('clears a registered status line before writing each line', () => {
    const events: string[] = [];
    const log = createLogger({ write: (line) => events.push(`write ${line.trim().slice(NOW.length + 1)}`) });
    log.status.set({ clear: () => events.push('clear') });
    log.info('one');
    log.warn('two');
    expect(events).toEqual(['clear', 'write INFO  one', 'clear', 'write WARN  two']);
  });

  it('clears it before handing a line to a sink too', () => {
    const events: string[] = [];
    const log = createLogger({ sink: (_level, message) => events.push(`sink ${message}`) });
    log.status.set({ clear: () => events.push('clear') });
    log.error('boom');
    expect(events).toEqual(['clear', 'sink boom']);
  });

  it('does not clear it for a line below the level', () => {
    const events: string[] = [];
    const log = createLogger({ level: 'warn', write: () => events.push('write') });
    log.status.set({ clear: () => events.push('clear') });
    log.info('quiet');
    log.debug('quieter');
    expect(events).toEqual([]);
  });

  it('stops clearing once the status line is unset', () => {
    const events: string[] = [];
    const log = createLogger({ write: () => events.push('write') });
    log.status.set({ clear: () => events.push('clear') });
    log.status.set(undefined);
    log.info('x');
    expect(events).toEqual(['write']);
  });

  it('gives each logger its own status slot', () => {
    const session = new Session();
    const a = session.logger({ write: () => undefined });
    const b = session.logger({ write: () => undefined });
    expect(a.status).toBeInstanceOf(StatusSlot);
    expect(a.status).not.toBe(b.status);
    const cleared: string[] = [];
    a.status.set({ clear: () => cleared.push('a') });
    b.info('only b writes');
    expect(cleared).toEqual([]);
  });
});

describe('METRIC lines', () => {
  const point = { type: 'timer', metric: 'sync_duration', value: 1.5, tags: { stream: 'training', status: 'succeeded' } } as const;

  it('text logs keep the Singer/Meltano layout `METRIC: {"type","metric","value","tags"}` in the message', () => {
    const lines: string[] = [];
    createLogger({ write: (line) => lines.push(line) }).metric(point);
    expect(lines).toEqual([`${NOW} INFO  METRIC: {"type":"timer","metric":"sync_duration","value":1.5,"tags":{"stream":"training","status":"succeeded"}}\n`]);
  });

  it('JSON logs carry the metric as a structured `metric` member, the message being `METRIC`', () => {
    const lines: string[] = [];
    createLogger({ format: 'json', write: (line) => lines.push(line) }).metric(point);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toEqual({ time: NOW, level: 'info', message: 'METRIC', metric: point });
  });

  it('a protocol sink (Airbyte LOG) gets the text layout, and a level above info drops the line', () => {
    const seen: Array<[LogLevel, string]> = [];
    createLogger({ format: 'json', sink: (level, message) => seen.push([level, message]) }).metric(point);
    expect(seen).toEqual([['info', `METRIC: ${JSON.stringify(point)}`]]);
    const quiet: string[] = [];
    createLogger({ format: 'json', level: 'warn', write: (line) => quiet.push(line) }).metric(point);
    expect(quiet).toEqual([]);
  });
});

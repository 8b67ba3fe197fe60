import { Redactor } from './redact.js';

/**
 * Logs go to stderr (stdout carries protocol messages only). Every line passes
 * through the run's redactor, so a secret that reaches a message by accident
 * (an error from a library quoting a header, say) is masked before it is written.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const LEVEL_RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type LogFormat = 'text' | 'json';

/** Where a live status line (the progress line) registers, so that each log line clears it first and the two never share a row. */
export class StatusSlot {
  private line: { clear(): void } | undefined;

  set(line: { clear(): void } | undefined): void {
    this.line = line;
  }

  clear(): void {
    this.line?.clear();
  }
}

/** A Singer metric: `{"type","metric","value","tags"}`, as singer-python and Meltano write and read it. */
export interface MetricPoint {
  readonly type: 'counter' | 'timer';
  readonly metric: string;
  readonly value: number;
  readonly tags: Readonly<Record<string, string | number | boolean>>;
}

export interface Logger {
  /**
   * An info line: `METRIC: {...}` in text logs (and wherever a protocol wraps
   * the message), and in JSON logs the message `METRIC` with the point as the
   * `metric` member, so a JSON pipeline reads it without parsing a message.
   */
  metric(point: MetricPoint): void;
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  readonly status: StatusSlot;
}

export interface LoggerOptions {
  level?: LogLevel;
  format?: LogFormat;
  write?: (line: string) => void;
  /** Receives each message instead of `write`, for protocols that wrap logs in their own messages. */
  sink?: (level: LogLevel, message: string) => void;
  redactor?: Redactor;
}

function withFields(message: string, fields?: Record<string, unknown>): string {
  return fields && Object.keys(fields).length > 0 ? `${message} ${JSON.stringify(fields)}` : message;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const minimum = LEVEL_RANK[options.level ?? 'info'];
  const format = options.format ?? 'text';
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const redactor = options.redactor ?? new Redactor();
  const status = new StatusSlot();
  const emit = (level: LogLevel, message: string, fields?: Record<string, unknown>): void => {
    if (LEVEL_RANK[level] < minimum) return;
    status.clear();
    if (options.sink) return options.sink(level, redactor.redact(withFields(message, fields)));
    const time = new Date().toISOString();
    const line = format === 'json' ? JSON.stringify({ time, level, message, ...fields }) : `${time} ${level.toUpperCase().padEnd(5)} ${withFields(message, fields)}`;
    write(`${redactor.redact(line)}\n`);
  };
  const metric = (point: MetricPoint): void => {
    const { type, metric: name, value, tags } = point;
    const ordered = { type, metric: name, value, tags };
    if (format === 'json' && !options.sink) emit('info', 'METRIC', { metric: ordered });
    else emit('info', `METRIC: ${JSON.stringify(ordered)}`);
  };
  return {
    metric,
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    status,
  };
}

/** The last line of a failed run, in the run's log format. */
export function fatalLine(message: string, format: LogFormat, redactor: Redactor): string {
  const text = redactor.redact(message);
  return format === 'json' ? `${JSON.stringify({ time: new Date().toISOString(), level: 'error', message: text })}\n` : `${text}\n`;
}

/**
 * Logs go to stderr (stdout carries protocol messages only). Every line passes
 * through the redactor, so a secret that reaches a message by accident (an
 * error from a library quoting a header, say) is masked before it is written.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const LEVEL_RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type LogFormat = 'text' | 'json';

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

const secrets = new Set<string>();

/** The progress line drawn on stderr, if any: cleared before a log line so the two never share a row. */
let statusLine: { clear(): void } | undefined;

export function setStatusLine(line: { clear(): void } | undefined): void {
  statusLine = line;
}

/** The log format of the run, once the config is read: the fatal error line follows it too. */
let runLogFormat: LogFormat = 'text';

export function setRunLogFormat(format: LogFormat): void {
  runLogFormat = format;
}

/** The last line of a failed run, in the run's log format. */
export function fatalLine(message: string): string {
  const text = redact(message);
  return runLogFormat === 'json' ? `${JSON.stringify({ time: new Date().toISOString(), level: 'error', message: text })}\n` : `${text}\n`;
}

/** Registers a value that must never appear in any output. */
export function registerSecret(secret: string | undefined): void {
  if (secret && secret.length >= 4) secrets.add(secret);
}

export function redact(text: string): string {
  let out = text;
  for (const secret of secrets) {
    if (out.includes(secret)) out = out.split(secret).join('***');
  }
  return out;
}

export interface LoggerOptions {
  level?: LogLevel;
  format?: LogFormat;
  write?: (line: string) => void;
  /** Receives each message instead of `write`, for protocols that wrap logs in their own messages. */
  sink?: (level: LogLevel, message: string) => void;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const minimum = LEVEL_RANK[options.level ?? 'info'];
  const format = options.format ?? 'text';
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const emit = (level: LogLevel, message: string, fields?: Record<string, unknown>): void => {
    if (LEVEL_RANK[level] < minimum) return;
    statusLine?.clear();
    if (options.sink) {
      const extra = fields && Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields)}` : '';
      options.sink(level, redact(`${message}${extra}`));
      return;
    }
    const time = new Date().toISOString();
    let line: string;
    if (format === 'json') {
      line = JSON.stringify({ time, level, message, ...fields });
    } else {
      const extra = fields && Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields)}` : '';
      line = `${time} ${level.toUpperCase().padEnd(5)} ${message}${extra}`;
    }
    write(`${redact(line)}\n`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
  };
}

import { createLogger, fatalLine, type LogFormat, type Logger, type LoggerOptions, type LogLevel } from './log.js';
import { Redactor } from './redact.js';

/**
 * What one command run knows about reporting: the secrets to mask and the log
 * format, both learnt when the config is read, so that an error thrown at any
 * point (before or after) is reported in the run's format and never shows a
 * secret. Each entry point makes one.
 */
export class Session {
  readonly redactor = new Redactor();

  /** `program`: the name its errors start with, as the command was called (`source-report-dump`, `tap-report-dump airbyte`). */
  constructor(readonly program = 'tap-report-dump') {}

  private format: LogFormat = 'text';
  private level: LogLevel = 'info';

  /** Takes the secrets and log settings of a config that was read. */
  adopt(config: { access_token?: string; pseudonymisation_key?: string; log_format?: LogFormat; log_level?: LogLevel }): void {
    this.redactor.add(config.access_token);
    this.redactor.add(config.pseudonymisation_key);
    if (config.log_format) this.format = config.log_format;
    if (config.log_level) this.level = config.log_level;
  }

  logger(options: LoggerOptions = {}): Logger {
    return createLogger({ level: this.level, format: this.format, redactor: this.redactor, ...options });
  }

  redact(text: string): string {
    return this.redactor.redact(text);
  }

  fatalLine(message: string): string {
    return fatalLine(message, this.format, this.redactor);
  }
}

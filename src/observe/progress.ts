import type { StatusSlot } from './log.js';

/**
 * A live progress line on stderr, only when stderr is a terminal (a log file
 * or an orchestrator gets the end-of-stream summary instead).
 */
export class ProgressLine {
  private lastDraw = 0;
  private drawn = false;
  private readonly started = Date.now();

  private readonly out: NodeJS.WriteStream;
  private readonly enabled: boolean;
  private readonly slot: StatusSlot | undefined;

  /** `slot`: the logger's status slot, so its log lines clear this line first. */
  constructor(
    private readonly stream: string,
    options: { out?: NodeJS.WriteStream; enabled?: boolean; slot?: StatusSlot } = {},
  ) {
    this.out = options.out ?? process.stderr;
    this.enabled = options.enabled ?? (Boolean(process.stderr.isTTY) && !process.env.CI);
    this.slot = options.slot;
  }

  update(records: number, bytes: number): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (now - this.lastDraw < 250) return;
    this.lastDraw = now;
    const seconds = Math.max(0.001, (now - this.started) / 1000);
    const line = `${this.stream}: ${records.toLocaleString('en-US')} records, ${(bytes / 1e6).toFixed(1)} MB, ${Math.round(records / seconds).toLocaleString('en-US')} records/s`;
    this.out.write(`\r\x1b[2K${line}`);
    this.drawn = true;
    this.slot?.set(this);
  }

  /** Removes the line (the logger calls this before writing; the next update draws it again). */
  clear(): void {
    if (this.drawn) this.out.write('\r\x1b[2K');
    this.drawn = false;
    this.slot?.set(undefined);
  }
}

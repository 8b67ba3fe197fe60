import type { OutputProtocol, StreamStatus } from '../../output/protocol.js';
import type { MessageWriter } from '../../output/writer.js';

/**
 * One stream's status lines, for a protocol that has them (Airbyte's
 * STREAM_STATUS): started before anything of the stream, running once its
 * dump answers (before any of its records reach stdout) or before its state
 * when no read answered, complete after its state, incomplete when it fails.
 */
export class StreamProgress {
  private isRunning = false;

  constructor(
    private readonly stream: string,
    private readonly protocol: OutputProtocol,
    private readonly writer: MessageWriter,
  ) {}

  started(): void {
    this.line('started');
  }

  /** Once per stream: a read that starts again (a resumed body, a pass read again) says nothing more. */
  running(): void {
    if (this.isRunning) return;
    this.isRunning = true;
    this.line('running');
  }

  complete(): void {
    this.line('complete');
  }

  /** Sent on at once, as every status line: the run ends with the error that follows. */
  incomplete(): void {
    this.line('incomplete');
  }

  private line(status: StreamStatus): void {
    if (this.protocol.streamStatus !== undefined) this.writer.message(this.protocol.streamStatus(this.stream, status));
  }
}

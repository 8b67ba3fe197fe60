/** The dump requested again does not line up with what was read before. */
export class ResumeMismatchError extends Error {}

/**
 * Where a dump read stands, so that after a broken body the same dump can be
 * read again without repeating records: records up to `handled` are skipped,
 * and the last of them must have the same bytes as before (or the same line
 * number, for an invalid line), otherwise ResumeMismatchError says the dump
 * must be read from the start.
 */
export class ResumeCursor {
  /** Records (and invalid lines) seen in the current read. */
  position = 0;
  /** Records handled across reads of an unchanged dump. */
  handled = 0;
  private buffer: Buffer | undefined;
  private start = 0;
  private end = 0;
  private line = 0;

  /** Starts a new read of the dump; `sameDump` keeps what was handled. */
  restart(sameDump: boolean): void {
    this.position = 0;
    if (!sameDump) this.handled = 0;
  }

  /** Counts a record (or, without bytes, an invalid line) and says whether it is new. */
  advance(buffer: Buffer | undefined, start: number, end: number, line: number): boolean {
    this.position++;
    if (this.position <= this.handled) {
      if (this.position === this.handled) {
        const same =
          buffer === undefined || this.buffer === undefined
            ? buffer === this.buffer && line === this.line
            : buffer.compare(this.buffer, this.start, this.end, start, end) === 0;
        if (!same) throw new ResumeMismatchError();
      }
      return false;
    }
    this.handled = this.position;
    this.buffer = buffer;
    this.start = start;
    this.end = end;
    this.line = line;
    return true;
  }
}

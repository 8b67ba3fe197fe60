import { createHash, type Hash } from 'node:crypto';

/** The dump requested again does not begin with the bytes already read: it must be read from the start. */
export class ResumeMismatchError extends Error {}

/** What a broken read proved: the body's first `bytes` bytes (ending at a line break) hash to `digest`, and hold `records` records. */
export interface PrefixProof {
  readonly bytes: number;
  readonly digest: string;
  readonly records: number;
}

/**
 * Hashes a body up to its last line break so far, as it arrives. Every record
 * (and invalid line) ends at a line break, so the hashed prefix holds exactly
 * the records the decoder has counted; a row still open is not in it. One
 * SHA-1 update per chunk (the bytes after the last line break wait for the
 * next chunk that has one), a small part of a read's cost.
 */
export class PrefixHasher {
  private readonly hash: Hash = createHash('sha1');
  /** Bytes hashed: the body up to and including its last line break so far. */
  hashed = 0;
  /** Bytes received. */
  received = 0;
  /** Bytes received after the last line break, hashed once a later chunk ends their line. */
  private pending: Buffer[] = [];

  push(chunk: Buffer): void {
    this.received += chunk.length;
    const lastBreak = chunk.lastIndexOf(10);
    if (lastBreak === -1) {
      this.pending.push(chunk);
      return;
    }
    for (const part of this.pending) this.update(part);
    this.pending = [];
    this.update(chunk.subarray(0, lastBreak + 1));
    if (lastBreak + 1 < chunk.length) this.pending.push(chunk.subarray(lastBreak + 1));
  }

  /** The digest of what is hashed so far. */
  digest(): string {
    return this.hash.copy().digest('base64url');
  }

  private update(part: Buffer): void {
    this.hash.update(part);
    this.hashed += part.length;
  }
}

/**
 * Where a dump read stands across attempts. After a broken body, the next
 * read skips the records an earlier read handled only once it has proved that
 * the dump begins with exactly the bytes those records came from (same length,
 * same SHA-1), whatever its Last-Modified says; otherwise it reads from the
 * start and emits again (at least once: targets upsert by key), never skipping
 * a record it has not emitted.
 */
export class ResumeCursor {
  /** Records (and invalid lines) seen in the current read. */
  position = 0;
  /** Records handled: those of a proven prefix, and those of this read. */
  handled = 0;
  /** The most records any read got to: a read that passes it made progress. */
  furthest = 0;
  private proof: PrefixProof | undefined;
  private verified = true;
  private hasher = new PrefixHasher();

  /** Counts a record (or an invalid line) and says whether it is new. */
  advance(): boolean {
    this.position++;
    if (this.position <= this.handled) return false;
    this.handled = this.position;
    if (this.handled > this.furthest) this.furthest = this.handled;
    return true;
  }

  /** Whether this read skips records an earlier read handled. */
  get resuming(): boolean {
    return this.proof !== undefined;
  }

  /**
   * Takes each chunk of the current read before the decoder does. In a resumed
   * read, the chunk that completes the proven prefix is checked before any of
   * it is decoded. Throws ResumeMismatchError.
   */
  chunk(chunk: Buffer): void {
    const proof = this.proof;
    const upTo = proof === undefined || this.verified ? -1 : proof.bytes - this.hasher.received;
    if (upTo < 0 || upTo > chunk.length) return this.hasher.push(chunk);
    this.hasher.push(chunk.subarray(0, upTo));
    if (this.hasher.hashed !== proof!.bytes || this.hasher.digest() !== proof!.digest) {
      throw new ResumeMismatchError('the dump read again does not begin with the bytes already read');
    }
    this.verified = true;
    if (upTo < chunk.length) this.hasher.push(chunk.subarray(upTo));
  }

  /** The current read reached the end of the body: a resumed read that never reached its proven prefix did not line up. */
  end(): void {
    if (!this.verified) throw new ResumeMismatchError('the dump read again is shorter than the part already read');
  }

  /**
   * The current read broke: the next one may skip what is proven. A resumed
   * read that broke before proving its prefix keeps the earlier proof.
   */
  broke(): void {
    if (this.verified) {
      this.proof = this.position > 0 ? { bytes: this.hasher.hashed, digest: this.hasher.digest(), records: this.position } : undefined;
      this.handled = this.position;
    }
    this.next();
  }

  /** The dump did not line up: the next read starts from the beginning, skipping nothing. */
  mismatched(): void {
    this.proof = undefined;
    this.handled = 0;
    this.next();
  }

  private next(): void {
    this.position = 0;
    this.verified = this.proof === undefined;
    this.hasher = new PrefixHasher();
  }
}

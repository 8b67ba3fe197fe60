/**
 * A record's content, kept cheaply (its bytes or texts) and built only when
 * asked for. It may first point into the buffer its line was read from:
 * `settle` makes it independent of that buffer, and the decoder has the
 * cursor settle its snapshots once per chunk, so a record that a later one of
 * the same chunk passes (every record of a dump sorted by the key) is never copied.
 */
export interface RecordSnapshot {
  settle(): void;
  read(): Record<string, unknown>;
}

/** A snapshot of content that owns what it needs already. */
export function settledSnapshot(read: () => Record<string, unknown>): RecordSnapshot {
  return { settle() {}, read };
}

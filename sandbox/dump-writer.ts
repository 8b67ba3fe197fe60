import type { Writable } from 'node:stream';
import type { Dataset, RecordFilter, Snapshot } from './dataset.js';
import type { RecordRenderer } from './render.js';
import type { RawRecord } from './model.js';
import { rowAt, type RowOrder } from './order.js';
import type { DumpFormat } from '../src/catalog/reports.js';

/** Records are batched into writes of about this many characters. */
const CHUNK_CHARS = 64 * 1024;
/** Rows scanned without writing before the loop yields, so filtered scans keep the server responsive. */
const ROWS_PER_YIELD = 20_000;

/** Resolves on 'drain', or when the stream can no longer drain (closed, errored). */
export function waitDrain(stream: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off('drain', done);
      stream.off('close', done);
      stream.off('error', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
    stream.on('error', done);
  });
}

export interface DumpSource {
  readonly dataset: Dataset;
  readonly snapshot: Snapshot;
  readonly renderer: RecordRenderer;
  readonly format: DumpFormat;
  readonly filter: RecordFilter;
  /** The rows of `snapshot` in serving order (null: index order). */
  readonly rows: RowOrder;
}

/** The records of a dump that pass its filter, in serving order. */
export function* matchingRecords(source: Pick<DumpSource, 'dataset' | 'snapshot' | 'filter' | 'rows'>): Generator<RawRecord> {
  const { dataset, snapshot, filter, rows } = source;
  for (let p = 0; p < snapshot.count; p++) {
    const record = dataset.matchAt(snapshot, rowAt(rows, p), filter);
    if (record) yield record;
  }
}

/** Synchronous line producer shared by pre-rendered files and the in-process API. */
export function* dumpLines(source: DumpSource): Generator<string> {
  const { renderer, format } = source;
  const preamble = renderer.preamble(format);
  if (preamble) yield preamble;
  for (const record of matchingRecords(source)) yield renderer.line(format, record);
}

/**
 * Streams a dump into `out`, generated on the fly: batched writes, waiting for
 * 'drain' when the destination is full. Stops early when `stopped()` turns true.
 * Does not end `out`.
 */
export async function writeDump(source: DumpSource, out: Writable, stopped: () => boolean): Promise<void> {
  const { dataset, snapshot, renderer, format, filter, rows } = source;
  let chunk = renderer.preamble(format);
  let scannedSinceYield = 0;
  for (let p = 0; p < snapshot.count; p++) {
    const record = dataset.matchAt(snapshot, rowAt(rows, p), filter);
    if (record) chunk += renderer.line(format, record);
    if (chunk.length >= CHUNK_CHARS) {
      if (stopped()) return;
      const more = out.write(chunk);
      chunk = '';
      scannedSinceYield = 0;
      if (!more) await waitDrain(out);
    } else if (++scannedSinceYield >= ROWS_PER_YIELD) {
      scannedSinceYield = 0;
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (stopped()) return;
    }
  }
  if (chunk.length > 0 && !stopped()) {
    if (!out.write(chunk)) await waitDrain(out);
  }
}

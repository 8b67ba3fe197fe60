import type { Transform } from 'node:stream';
import zlib from 'node:zlib';

/**
 * How a full pass's spool is compressed: zstd at level 1 where the Node line
 * has it (22.15 and later, 24, 26), gzip at level 1 elsewhere (Node 20, 22
 * before 22.15). On the records of a pass zstd takes half gzip's CPU to
 * write (about 145 ms against 290 for 113 MB, 200,000 training records, Node
 * 24), less to read back, and makes a smaller file (5.5 % of the records'
 * size against 7.8 %); its negative levels save little time for a larger
 * file (-3: about 5 % less CPU, 7.7 %). A spool is only ever read by the run
 * that wrote it, so the codecs need not agree; the file name says which.
 */
export interface SpoolCodec {
  /** The spool file's name. */
  readonly file: string;
  compressor(): Transform;
  decompressor(): Transform;
}

/** The zlib functions a codec is made of: the module's, or in tests one without zstd, as Node 20's. */
export type Zlib = Pick<typeof zlib, 'createGzip' | 'createGunzip'> & Partial<Pick<typeof zlib, 'createZstdCompress' | 'createZstdDecompress'>>;

/**
 * The compressor's side: blocks of compressed output, and up to 4 MiB of
 * records queued (four of the spool's blocks), so that it keeps compressing
 * on the thread pool while the main thread reads the next records.
 */
const COMPRESS = { chunkSize: 256 * 1024, highWaterMark: 4 * 1024 * 1024 };
/**
 * The decompressor's side: records go to stdout as the chunks it makes,
 * each a fresh buffer freed only by a garbage collection. 128 KiB is where
 * the two costs meet: fewer, larger chunks cost less CPU a byte, but pile up
 * between collections (256 KiB chunks: about 6 % less CPU to send a pass, 17
 * MiB more peak RSS; 64 KiB: 20 % more CPU).
 */
const DECOMPRESS = { chunkSize: 128 * 1024, highWaterMark: 1024 * 1024 };

function gzipCodec(z: Zlib): SpoolCodec {
  return {
    file: 'records.jsonl.gz',
    // Level 1: the spool lives for minutes.
    compressor: () => z.createGzip({ ...COMPRESS, level: 1 }),
    decompressor: () => z.createGunzip(DECOMPRESS),
  };
}

/** zstd where this Node has it, gzip otherwise. */
export function spoolCodec(z: Zlib = zlib): SpoolCodec {
  const { createZstdCompress: compress, createZstdDecompress: decompress } = z;
  if (compress === undefined || decompress === undefined) return gzipCodec(z);
  return {
    file: 'records.jsonl.zst',
    // The checksum makes a spool damaged on disk fail as it is sent, as gzip's CRC does.
    compressor: () => compress({ ...COMPRESS, params: { [zlib.constants.ZSTD_c_compressionLevel]: 1, [zlib.constants.ZSTD_c_checksumFlag]: 1 } }),
    decompressor: () => decompress(DECOMPRESS),
  };
}

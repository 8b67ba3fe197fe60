import type { Transform } from 'node:stream';
import zlib from 'node:zlib';

/**
 * How a full pass's spool is compressed: zstd at level 1 where the Node line
 * has it (22.15 and later, 24, 26), gzip at level 1 elsewhere (Node 20, 22
 * before 22.15). On the records of a 200,000-record training pass (113 MB)
 * zstd takes half gzip's CPU to write (about 145 ms against 290, Node 24)
 * and less to read back (150 against 190), for a smaller file (5.5 % of the
 * records against 7.8 %). Its negative levels are no faster on these
 * records (the cost is in the streaming, not the match search) and make
 * larger files (-3: 7.7 %, -20: 16 %). A spool is only ever read by the run
 * that wrote it, so the codecs need not agree (the file name says which),
 * and Node's zstd being experimental (stability 1; no warning is printed)
 * cannot strand a spool across a Node upgrade.
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
 * the two costs meet: larger chunks cost less CPU, but pile up between
 * collections (sending a 200,000-record pass took about 200 ms of CPU with
 * 128 KiB chunks and a peak of 102-119 MiB, 180-200 ms and 111-137 MiB with
 * 256 KiB, 145 ms and up to 154 MiB with 1 MiB; 64 KiB: 210 ms).
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

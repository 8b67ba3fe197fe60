/**
 * A DataView of the buffer a loop reads, made again only when the buffer's
 * ArrayBuffer changes (once per chunk, not per record): a DataView reads a
 * little-endian word at any offset in one load, on every platform.
 */
export class DataViewCache {
  private view: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));
  private viewed: ArrayBufferLike = this.view.buffer;

  /** A view of bytes' whole ArrayBuffer: index it at bytes.byteOffset + i. */
  of(bytes: Uint8Array): DataView<ArrayBufferLike> {
    if (this.viewed !== bytes.buffer) {
      this.viewed = bytes.buffer;
      this.view = new DataView(bytes.buffer);
    }
    return this.view;
  }
}

/**
 * An open-addressing index from a 64-bit key hash (two uint32 numbers, hi and
 * lo) to a row number, over keys the caller keeps in a Uint32Array: row r's
 * key at `keys[r * stride]` (hi) and `keys[r * stride + 1]` (lo). One Int32
 * slot per 3/4 row or more (row + 1; 0 is empty), linear probing: one or two
 * memory reads per lookup, nothing allocated per row.
 */

const GOLDEN = 0x9e3779b1;
const MIX = 0x85ebca6b;

export class KeyTable {
  private readonly slots: Int32Array;
  private readonly mask: number;
  private readonly shift: number;

  constructor(
    private readonly keys: Uint32Array,
    private readonly stride: number,
    rows: number,
  ) {
    let bits = 1;
    while (2 ** bits * 0.75 < rows) bits++;
    this.slots = new Int32Array(2 ** bits);
    this.mask = 2 ** bits - 1;
    this.shift = 32 - bits;
  }

  /** The slot that holds the key, or the empty slot where it goes. */
  slotOf(hi: number, lo: number): number {
    // Fibonacci hashing of both halves: the top bits spread even a weak hash.
    let slot = Math.imul(lo ^ Math.imul(hi, MIX), GOLDEN) >>> this.shift;
    for (;;) {
      const row = this.slots[slot] - 1;
      if (row < 0) return slot;
      const at = row * this.stride;
      if (this.keys[at] === hi && this.keys[at + 1] === lo) return slot;
      slot = (slot + 1) & this.mask;
    }
  }

  /** The row in `slot`, -1 if it is empty. */
  rowAt(slot: number): number {
    return this.slots[slot] - 1;
  }

  /** Has `slot` (from slotOf of row's key) name `row`. */
  put(slot: number, row: number): void {
    this.slots[slot] = row + 1;
  }

  /** The row with this key, or -1. */
  find(hi: number, lo: number): number {
    return this.slots[this.slotOf(hi, lo)] - 1;
  }
}

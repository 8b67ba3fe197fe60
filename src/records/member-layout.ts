/**
 * The member names of the last record a reader read in full, for the next
 * records to be checked against: records of a stream repeat their layout,
 * and comparing a name's bytes a word at a time with the one expected is
 * cheaper than scanning it for its end and finding out which it is.
 *
 * Each member's bytes from its opening quote through its colon (whitespace
 * between them included) are kept as little-endian words, the last one
 * masked to the bytes it holds; and the member's role, a number the reader
 * gives (which key it is, or none). A name whose bytes equal the expected
 * ones is that name, whatever its escapes: its text is theirs.
 */
export class MemberLayout {
  /** Member m's words are words[offsets[m], offsets[m + 1]), each compared as `(word & masks[k]) === words[k]`. */
  words = new Int32Array(64);
  masks = new Int32Array(64);
  offsets = new Int32Array(33);
  /** From member m's opening quote to just after its colon. */
  lengths = new Int32Array(32);
  roles = new Int32Array(32);
  /** Members laid out; 0 while there is no layout. */
  count = 0;

  /** Where the reader found each member's opening quote and colon, noted as it reads. */
  private nameStarts = new Int32Array(32);
  private colons = new Int32Array(32);
  private notedRoles = new Int32Array(32);

  /** Whether a member before member m has another role than `left`. */
  keptBefore(m: number, left: number): boolean {
    for (let k = 0; k < m; k++) if (this.roles[k] !== left) return true;
    return false;
  }

  /** Drops the layout: the reader is reading a record in full. */
  clear(): void {
    this.count = 0;
  }

  /** Member m of the record being read in full: its opening quote, its colon and its role. */
  note(m: number, nameStart: number, colon: number, role: number): void {
    if (m === this.nameStarts.length) {
      this.nameStarts = grown(this.nameStarts, m * 2);
      this.colons = grown(this.colons, m * 2);
      this.notedRoles = grown(this.notedRoles, m * 2);
    }
    this.nameStarts[m] = nameStart;
    this.colons[m] = colon;
    this.notedRoles[m] = role;
  }

  /** Keeps the `count` members noted, in bytes, as the layout. */
  learn(bytes: Uint8Array, count: number): void {
    let words = 0;
    for (let m = 0; m < count; m++) words += (this.colons[m] - this.nameStarts[m] + 4) >> 2;
    if (words > this.words.length) {
      this.words = new Int32Array(words * 2);
      this.masks = new Int32Array(words * 2);
    }
    if (count >= this.offsets.length) {
      this.offsets = new Int32Array(count * 2 + 1);
      this.lengths = new Int32Array(count * 2);
      this.roles = new Int32Array(count * 2);
    }
    let k = 0;
    for (let m = 0; m < count; m++) {
      const start = this.nameStarts[m];
      const colon = this.colons[m];
      this.offsets[m] = k;
      this.lengths[m] = colon + 1 - start;
      this.roles[m] = this.notedRoles[m];
      for (let p = start; p <= colon; p += 4, k++) {
        let word = 0;
        let mask = 0;
        for (let b = 0; b < 4 && p + b <= colon; b++) {
          word |= bytes[p + b] << (8 * b);
          mask |= 0xff << (8 * b);
        }
        this.words[k] = word;
        this.masks[k] = mask;
      }
    }
    this.offsets[count] = k;
    this.count = count;
  }
}

function grown(array: Int32Array, length: number): Int32Array<ArrayBuffer> {
  const bigger = new Int32Array(length);
  bigger.set(array);
  return bigger;
}

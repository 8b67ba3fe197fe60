/** Thrown inside the scan at the offset of the first syntax error. */
class SyntaxAt {
  constructor(readonly offset: number) {}
}

/**
 * A small recursive-descent JSON scanner that only finds where a text stops
 * being JSON. JSON.parse says what is wrong but, depending on the Node
 * version, quotes the text around it (possibly a token or personal data)
 * instead of saying where; this says where and quotes nothing.
 */
class JsonSyntaxScanner {
  private i = 0;

  constructor(private readonly text: string) {}

  /** The offset of the first syntax error, or undefined when the text is JSON. */
  scan(): number | undefined {
    try {
      this.value(0);
      this.ws();
      return this.i < this.text.length ? this.i : undefined;
    } catch (error) {
      if (error instanceof SyntaxAt) return error.offset;
      throw error;
    }
  }

  private fail(): never {
    throw new SyntaxAt(this.i);
  }

  private ws(): void {
    const { text } = this;
    while (this.i < text.length && (text[this.i] === ' ' || text[this.i] === '\t' || text[this.i] === '\n' || text[this.i] === '\r')) this.i++;
  }

  private value(depth: number): void {
    if (depth > 1000) this.fail();
    this.ws();
    const c = this.text[this.i];
    if (c === '{') this.container('}', depth, () => this.member(depth));
    else if (c === '[') this.container(']', depth, () => this.value(depth + 1));
    else if (c === '"') this.string();
    else if (c === 't') this.literal('true');
    else if (c === 'f') this.literal('false');
    else if (c === 'n') this.literal('null');
    else this.number();
  }

  /** `{...}` or `[...]`: items separated by commas, no trailing comma. */
  private container(close: string, depth: number, item: () => void): void {
    this.i++;
    this.ws();
    if (this.text[this.i] === close) {
      this.i++;
      return;
    }
    for (;;) {
      item();
      this.ws();
      if (this.text[this.i] === ',') this.i++;
      else if (this.text[this.i] === close) {
        this.i++;
        return;
      } else this.fail();
    }
  }

  private member(depth: number): void {
    this.ws();
    if (this.text[this.i] !== '"') this.fail();
    this.string();
    this.ws();
    if (this.text[this.i] !== ':') this.fail();
    this.i++;
    this.value(depth + 1);
  }

  private literal(word: string): void {
    if (this.text.startsWith(word, this.i)) this.i += word.length;
    else this.fail();
  }

  private string(): void {
    const { text } = this;
    this.i++;
    while (this.i < text.length) {
      const c = text.charCodeAt(this.i);
      if (c === 34) {
        this.i++;
        return;
      }
      if (c < 0x20) this.fail();
      if (c === 92) this.escape();
      else this.i++;
    }
    this.fail();
  }

  private escape(): void {
    const next = this.text[this.i + 1];
    if (next === 'u') {
      if (!/^[0-9a-fA-F]{4}$/.test(this.text.slice(this.i + 2, this.i + 6))) this.fail();
      this.i += 6;
    } else if (next !== undefined && '"\\/bfnrt'.includes(next)) this.i += 2;
    else this.fail();
  }

  private number(): void {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(this.text.slice(this.i, this.i + 400));
    if (!match || match[0] === '' || match[0] === '-') this.fail();
    this.i += match[0].length;
  }
}

/** The offset of the first syntax error in a JSON text, or undefined when it is valid. */
export function jsonErrorOffset(text: string): number | undefined {
  return new JsonSyntaxScanner(text).scan();
}

/** "line L, column C" of the first syntax error, or "unexpected end". */
export function jsonErrorLocation(text: string): string {
  const offset = jsonErrorOffset(text);
  if (offset === undefined) return 'syntax error';
  if (offset >= text.length) return 'unexpected end';
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return `line ${line}, column ${offset - before.lastIndexOf('\n')}`;
}

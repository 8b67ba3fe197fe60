/**
 * The offset of the first syntax error in a JSON text, found by a small
 * recursive-descent scan. JSON.parse says what is wrong but, depending on the
 * Node version, quotes the text around it (possibly a token or personal data)
 * instead of saying where; this says where and quotes nothing.
 */
export function jsonErrorOffset(text: string): number | undefined {
  let i = 0;
  const ws = (): void => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const fail = (): never => {
    throw i;
  };
  const literal = (word: string): void => {
    if (text.startsWith(word, i)) i += word.length;
    else fail();
  };
  const string = (): void => {
    i++;
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === 34) {
        i++;
        return;
      }
      if (c < 0x20) fail();
      if (c === 92) {
        const next = text[i + 1];
        if (next === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail();
          i += 6;
        } else if (next !== undefined && '"\\/bfnrt'.includes(next)) i += 2;
        else fail();
      } else i++;
    }
    fail();
  };
  const number = (): void => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!match || match[0] === '' || match[0] === '-') fail();
    i += match![0].length;
  };
  const value = (depth: number): void => {
    if (depth > 1000) fail();
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        string();
        ws();
        if (text[i] !== ':') fail();
        i++;
        value(depth + 1);
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') {
          i++;
          return;
        } else fail();
      }
    } else if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value(depth + 1);
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') {
          i++;
          return;
        } else fail();
      }
    } else if (c === '"') string();
    else if (c === 't') literal('true');
    else if (c === 'f') literal('false');
    else if (c === 'n') literal('null');
    else number();
  };
  try {
    value(0);
    ws();
    return i < text.length ? i : undefined;
  } catch (offset) {
    return offset as number;
  }
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

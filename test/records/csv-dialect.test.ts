import { describe, expect, it } from 'vitest';
import { CsvScanner, sniffDelimiter } from '../../src/records/csv.js';

/** Rows of a CSV text fed in chunks of `size` bytes, the delimiter sniffed. */
function rows(text: string, size: number, delimiter: number | null = null): string[][] {
  const out: string[][] = [];
  const scanner = new CsvScanner(1 << 20, (row) => out.push(row.texts()), (error) => {
    throw error;
  }, delimiter);
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) scanner.push(bytes.subarray(i, i + size));
  scanner.end();
  return out;
}

describe('the CSV delimiter', () => {
  it('is sniffed from the header line among comma, semicolon, tab and pipe, outside quotes', () => {
    const sniff = (line: string): string => String.fromCharCode(sniffDelimiter(Buffer.from(line), 0, Buffer.byteLength(line)));
    expect(sniff('User ID;E-mail;Completed At')).toBe(';');
    expect(sniff('a\tb\tc')).toBe('\t');
    expect(sniff('a|b|c')).toBe('|');
    expect(sniff('userId,email,completedAt')).toBe(',');
    expect(sniff('"a;b",c')).toBe(',');
    expect(sniff('single')).toBe(',');
  });

  it('splits every row once sniffed, whatever the chunking, quoted delimiters kept', () => {
    const text = '\uFEFFUser ID;Name;Note\r\nu1;"Doe; Jane";"say ""hi"""\r\nu2;Roe;\r\n';
    for (const size of [1, 2, 3, 7, 1000]) {
      expect(rows(text, size), String(size)).toEqual([['User ID', 'Name', 'Note'], ['u1', 'Doe; Jane', 'say "hi"'], ['u2', 'Roe', '']]);
    }
    expect(rows('a\tb\n1\t2', 1)).toEqual([['a', 'b'], ['1', '2']]);
  });

  it('is the one configured, when it is configured', () => {
    expect(rows('a;b,c\n1;2,3\n', 4, 44)).toEqual([['a;b', 'c'], ['1;2', '3']]);
  });
});

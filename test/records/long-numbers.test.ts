import { describe, expect, it } from 'vitest';
import { isLongInteger, isLongNumber, KEEPS_LONG_NUMBERS, parseKeepingDigits, significantDigits } from '../../src/records/long-numbers.js';

const bytes = (text: string) => Buffer.from(text);
const digits = (text: string) => significantDigits(bytes(text), 0, text.length);

describe('long numbers', () => {
  it('counts the significant digits of a JSON number (sign, leading zeros, dot and exponent left out); -1 for what is not one', () => {
    expect([digits('0'), digits('-0.000123'), digits('12345678901234567802'), digits('1.50'), digits('-9.007199254740993e15'), digits('100')]).toEqual([0, 3, 20, 3, 16, 3]);
    for (const text of ['', '-', '01', '1.', '.5', '1e', '1e+', '+1', '1x', '0x10', '1.2.3']) expect(digits(text), text).toBe(-1);
  });

  it.runIf(KEEPS_LONG_NUMBERS)('tells a number with more digits than a double keeps (more than 15), and one written as an integer', () => {
    const long = (text: string) => isLongNumber(bytes(text), 0, text.length);
    const integer = (text: string) => isLongInteger(bytes(text), 0, text.length);
    expect([long('123456789012345'), long('1234567890123456'), long('0.0000000000000001'), long('1.2345678901234567'), long('12345678901234567802')]).toEqual([false, true, false, true, true]);
    expect([integer('12345678901234567802'), integer('-12345678901234567802'), integer('1.2345678901234567802'), integer('12345678901234567e3')]).toEqual([true, true, false, false]);
  });

  it.runIf(KEEPS_LONG_NUMBERS)('parses JSON keeping a long number\'s digits (JSON.stringify writes them back), any other value as JSON.parse does', () => {
    const text = '{"id":12345678901234567802,"n":[1.2345678901234567890,2],"x":"12345678901234567802","small":900719925474099}';
    const parsed = parseKeepingDigits(text);
    expect(JSON.stringify(parsed)).toBe(text);
    expect((parsed as { small: number }).small).toBe(900719925474099);
  });

  it.skipIf(KEEPS_LONG_NUMBERS)('on a runtime without raw JSON (Node 20), reads every number as JSON.parse does, and no byte path treats one apart', () => {
    expect(parseKeepingDigits('{"id":12345678901234567802}')).toEqual(JSON.parse('{"id":12345678901234567802}'));
    expect(isLongNumber(bytes('12345678901234567802'), 0, 20)).toBe(false);
  });
});

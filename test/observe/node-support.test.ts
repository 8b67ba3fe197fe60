import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeSupported, unsupportedNodeWarning } from '../../src/observe/node-support.js';
import { ROOT } from '../helpers/build.js';

const RANGE = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;

describe('the supported Node.js lines', () => {
  it("are package.json's engines: 22 from 22.12, 24, 26 and later; not 20, nor the odd lines 23 and 25", () => {
    expect(RANGE).toBe('^22.12.0 || ^24.0.0 || >=26.0.0');
    const verdicts = ['20.19.0', '22.11.0', '22.12.0', '22.20.1', '23.11.0', '24.0.0', '24.11.1', '25.1.0', '26.0.0', '27.2.0'].map((v) => [v, nodeSupported(v, RANGE)]);
    expect(Object.fromEntries(verdicts)).toEqual({
      '20.19.0': false,
      '22.11.0': false,
      '22.12.0': true,
      '22.20.1': true,
      '23.11.0': false,
      '24.0.0': true,
      '24.11.1': true,
      '25.1.0': false,
      '26.0.0': true,
      '27.2.0': true,
    });
  });

  it('warn on an unsupported line, naming it, the range and the lines to use; nothing on a supported one', () => {
    expect(unsupportedNodeWarning('20.19.0', RANGE)).toBe(
      "Node.js 20.19.0 is not a line tap-report-dump supports (package.json engines: ^22.12.0 || ^24.0.0 || >=26.0.0); run it on Node.js 22, 24 or 26, see the README's Install section.",
    );
    expect(unsupportedNodeWarning('24.11.1', RANGE)).toBeUndefined();
  });

  it('refuse a range form they cannot read, rather than calling every version supported', () => {
    expect(() => nodeSupported('24.0.0', '>=22 <27')).toThrow(/unsupported engines range form/);
  });
});

import { describe, expect, it } from 'vitest';
import { parseArgs } from '../../bench/args.js';

describe('the options of npm run bench', () => {
  it('takes the documented ones, rounds of the orders defaulting to --rounds', () => {
    expect(parseArgs(['--records', '200000', '--rounds', '5', '--orders', 'ascending,shuffled', '--big', '0', '--slow-seconds', '0', '--main-only'])).toMatchObject({
      records: 200_000,
      rounds: 5,
      orderRounds: 5,
      orders: ['ascending', 'shuffled'],
      big: 0,
      slowSeconds: 0,
      mainOnly: true,
    });
  });

  it('refuses an unknown option, an unknown order and a number that is missing or not one, instead of running NaN rounds', () => {
    expect(() => parseArgs(['--full-pass'])).toThrow('bench: unknown option --full-pass');
    expect(() => parseArgs(['--orders', 'random'])).toThrow('bench: unknown order random');
    expect(() => parseArgs(['--rounds', '--big', '0'])).toThrow('bench: --rounds takes a number of 0 or more, not --big');
    expect(() => parseArgs(['--records'])).toThrow('bench: --records takes a number of 0 or more, not nothing');
    expect(() => parseArgs(['--records', '-5'])).toThrow('bench: --records takes a number of 0 or more, not -5');
  });
});

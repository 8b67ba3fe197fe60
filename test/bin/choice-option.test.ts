import { describe, expect, it } from 'vitest';
import { oneChoice } from '../../src/bin/choice-option.js';

/** An option that takes one of a few words: anything else is one line naming the option, its words and the likely typo. */

const syncMode = oneChoice('--sync-mode', ['incremental', 'full_refresh']);

describe('an option of a few words', () => {
  it('takes one of its words, or nothing', () => {
    expect(syncMode('full_refresh')).toBe('full_refresh');
    expect(syncMode(undefined)).toBeUndefined();
  });

  it('names a typo\'s likely word, and the words it takes', () => {
    expect(() => syncMode('incremetal')).toThrow('--sync-mode is incremetal (did you mean incremental?): use incremental or full_refresh');
    expect(() => syncMode('cdc')).toThrow(/^--sync-mode is cdc: use incremental or full_refresh$/);
  });

  it('never repeats a value that is not a plain word (it may be a secret pasted in the wrong place), and refuses it given twice', () => {
    expect(() => syncMode('s3cr3t token/=')).toThrow(/^--sync-mode is not a word it takes: use incremental or full_refresh$/);
    expect(() => syncMode(['incremental', 'full_refresh'])).toThrow('--sync-mode was given 2 times; give it once');
  });
});

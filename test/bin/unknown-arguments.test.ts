import { describe, expect, it } from 'vitest';
import { unknownArguments } from '../../src/bin/unknown-arguments.js';

/** An unknown command or option, named as it was written, with the known one a typo most likely meant. */

const KNOWN = ['sync', 'discover', 'check', '--config', '--catalog', '--state', '--properties'];

describe('an unknown command or option', () => {
  it('is named as written, dashes included, and the nearest known name suggested for a typo (a swap, a letter missing or added)', () => {
    expect(unknownArguments('catlog', ['sync', '--catlog', 'c.json'], 'tap', KNOWN)).toBe('--catlog is not a command or option of tap (did you mean --catalog?)');
    expect(unknownArguments('snyc', ['snyc'], 'tap', KNOWN)).toBe('snyc is not a command or option of tap (did you mean sync?)');
    expect(unknownArguments('statee', ['--statee', 's.json'], 'tap', KNOWN)).toBe('--statee is not a command or option of tap (did you mean --state?)');
  });

  it('suggests nothing for a name far from every known one, and never one two edits from a short name', () => {
    expect(unknownArguments('token', ['--token', 'x'], 'tap', KNOWN)).toBe('--token is not a command or option of tap');
    expect(unknownArguments('spec', ['spec'], 'tap', KNOWN)).toBe('spec is not a command or option of tap');
  });

  it('never repeats a value given with = (it may be a secret), and names every unknown one', () => {
    const text = unknownArguments('token, x', ['--token=s3cret', '-x'], 'tap', KNOWN);
    expect(text).toBe('--token, -x is not a command or option of tap');
    expect(text).not.toContain('s3cret');
  });

  it('leaves out a known option the parser calls unknown behind an unknown command, and says which command does not take one', () => {
    expect(unknownArguments('config, raed', ['raed', '--config', 'c.json'], 'tap', KNOWN)).toBe('raed is not a command or option of tap');
    expect(unknownArguments('config', ['check', '--config', 'c.json'], 'tap', KNOWN)).toBe('--config does not go with check');
  });

  it('never repeats a stray value (a token pasted where a command goes, a short flag with a value glued on), and names an unknown --kebab-case option once', () => {
    const pasted = unknownArguments('s3cr3tTOKEN', ['check', '--config', 'c.json', 's3cr3tTOKEN'], 'tap', KNOWN);
    expect(pasted).toBe('an argument (not shown: it may be a secret) is not a command or option of tap');
    const glued = unknownArguments('3, t, s, c, r', ['-ts3cr3t'], 'tap', KNOWN);
    expect(glued).toBe('an argument (not shown: it may be a secret) is not a command or option of tap');
    expect(glued + pasted).not.toMatch(/s3cr3t/i);
    expect(unknownArguments('access-token, accessToken', ['--access-token=abc'], 'tap', KNOWN)).toBe('--access-token is not a command or option of tap');
  });
});

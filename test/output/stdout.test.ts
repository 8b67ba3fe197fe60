import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { OutputClosedError, outputClosed } from '../../src/errors.js';
import { writeStdout } from '../../src/output/stdout.js';

/**
 * stdout closed by its reader: a command that keeps no state (check,
 * discover) says its output was cut off and nothing of state; a sync says
 * its state was not advanced, naming what reads it in the face's words.
 */

function closedPipe(): Writable {
  return new Writable({ write: (_chunk, _encoding, done) => done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })) });
}

describe('stdout closed by its reader', () => {
  it('a command without state (writeStdout) says the output was cut off, and nothing else', async () => {
    const failure = await writeStdout('training: OK\n', closedPipe()).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OutputClosedError);
    expect((failure as Error).message).toBe('Cannot write to stdout (EPIPE): the consumer closed the pipe; the output was cut off.');
  });

  it("a sync names the Singer face's target, or the Airbyte face's destination", () => {
    const epipe = Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
    expect(outputClosed(epipe, 3).message).toMatch(/after 3 records; the run stopped and the state was not advanced past the last STATE message sent\. Check the target's log for why it stopped reading\.$/);
    expect(outputClosed(epipe, 3, 'destination').message).toMatch(/Check the destination's log for why it stopped reading\.$/);
  });
});

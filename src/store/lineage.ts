import { join } from 'node:path';
import { type GenerationExpectation, type GenerationHeader, generationFileName, readGenerationHeader } from './generation-file.js';

/**
 * A pipeline's generations of a stream, as their headers link them: each
 * names its parent, the generation its run built on. Two pipelines of one
 * tenant and stream (two warehouses, each with its own state) write two
 * chains in the same folder; a run may remove only generations of its own
 * chain that no state of its pipeline can name any more:
 *
 *   - the ancestors of the generation its incoming state names (the target
 *     confirmed a state naming a later one);
 *   - the generations built on that one or on an ancestor: branches of runs
 *     whose state never reached the target (the target would have confirmed
 *     it, and the next run's state would name it).
 *
 * Only headers are read. A generation whose header is not this stream's and
 * fingerprint's, or cannot be read, is not known to be of the chain: it stays.
 */
export class Lineage {
  private constructor(
    private readonly folder: string,
    private readonly expect: GenerationExpectation,
    /** The generation the incoming state names; none: a first run, which knows no chain of its own. */
    private readonly incoming: string | undefined,
    private readonly ancestors: ReadonlySet<string>,
  ) {}

  /** The chain that ends in `incoming`, followed parent by parent in the headers of the stream's `folder`. */
  static of(folder: string, incoming: string | undefined, expect: GenerationExpectation): Lineage {
    const ancestors = new Set<string>();
    if (incoming !== undefined) {
      // A loop of parents (a file edited by hand) ends where it meets a generation already followed.
      for (let at = ours(folder, incoming, expect)?.parent; at !== undefined && at !== null && at !== incoming && !ancestors.has(at); at = ours(folder, at, expect)?.parent) {
        ancestors.add(at);
      }
    }
    return new Lineage(folder, expect, incoming, ancestors);
  }

  /** Whether no state of this pipeline can name `generation` any more: of this chain, and behind or beside the incoming one. Never the incoming one itself. */
  superseded(generation: string): boolean {
    if (this.incoming === undefined || generation === this.incoming) return false;
    const header = ours(this.folder, generation, this.expect);
    if (header === undefined) return false;
    if (this.ancestors.has(generation)) return true;
    return header.parent !== null && (header.parent === this.incoming || this.ancestors.has(header.parent));
  }
}

/** The header of `generation` if it is of this stream and fingerprint; else (gone, unreadable, damaged, another's) undefined. */
function ours(folder: string, generation: string, expect: GenerationExpectation): GenerationHeader | undefined {
  const header = readGenerationHeader(join(folder, generationFileName(generation)));
  return header?.stream === expect.stream && header.fingerprint === expect.fingerprint ? header : undefined;
}

import type { GenerationExpectation, GenerationOrigin } from './generation-file.js';

/**
 * A pipeline's generations of a stream, as their headers link them: each
 * names its parent, the generation its run built on. Two pipelines of one
 * tenant and stream (two warehouses, each with its own state) write two
 * chains in the same place; a run may remove only generations of its own
 * chain that no state of its pipeline can name any more:
 *
 *   - the ancestors of the generation its incoming state names (the target
 *     confirmed a state naming a later one);
 *   - the generations built on that one or on an ancestor: branches of runs
 *     whose state never reached the target (the target would have confirmed
 *     it, and the next run's state would name it).
 *
 * Only headers are read (`headerOf`: a folder's files, a bucket's object
 * metadata). A generation whose header is not this stream's and
 * fingerprint's, or cannot be read, is not known to be of the chain: it stays.
 */
export class Lineage {
  private constructor(
    private readonly headerOf: (generation: string) => GenerationOrigin | undefined,
    /** The generation the incoming state names; none: a first run, which knows no chain of its own. */
    private readonly incoming: string | undefined,
    private readonly ancestors: ReadonlySet<string>,
  ) {}

  /** The chain that ends in `incoming`, followed parent by parent. */
  static of(headerOf: (generation: string) => GenerationOrigin | undefined, incoming: string | undefined, expect: GenerationExpectation): Lineage {
    const ours = (generation: string): GenerationOrigin | undefined => {
      const header = headerOf(generation);
      return header?.stream === expect.stream && header.fingerprint === expect.fingerprint ? header : undefined;
    };
    const ancestors = new Set<string>();
    if (incoming !== undefined) {
      // A loop of parents (a file edited by hand) ends where it meets a generation already followed.
      for (let at = ours(incoming)?.parent; at !== undefined && at !== null && at !== incoming && !ancestors.has(at); at = ours(at)?.parent) {
        ancestors.add(at);
      }
    }
    return new Lineage(ours, incoming, ancestors);
  }

  /** Whether no state of this pipeline can name `generation` any more: of this chain, and behind or beside the incoming one. Never the incoming one itself. */
  superseded(generation: string): boolean {
    if (this.incoming === undefined || generation === this.incoming) return false;
    const header = this.headerOf(generation);
    if (header === undefined) return false;
    if (this.ancestors.has(generation)) return true;
    return header.parent !== null && (header.parent === this.incoming || this.ancestors.has(header.parent));
  }
}

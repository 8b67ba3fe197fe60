import { runtimeError } from '../errors.js';

/**
 * The first bytes of a body: a dump never starts like an HTML or XML page
 * (a login, proxy or error page answered with 200), whatever its Content-Type
 * said; such a body is an error, never records. A body that starts with
 * anything but `<` passes at once; one that starts with `<` is held until its
 * first few characters decide.
 */
export class DumpStart {
  private held: Buffer[] = [];
  private heldBytes = 0;
  private decided = false;

  constructor(private readonly what: string) {}

  /** The chunks that may go on now (none while undecided). */
  take(chunk: Buffer): Buffer[] {
    if (this.decided) return chunk.length > 0 ? [chunk] : [];
    if (chunk.length > 0) this.held.push(chunk);
    this.heldBytes += chunk.length;
    const start = this.start();
    if (start.length > 0 && (start[0] !== '<' || start.length >= 16 || this.heldBytes >= 256)) return this.decide(start);
    return [];
  }

  /** The body ended: decide on what there is. */
  end(): Buffer[] {
    return this.decided ? [] : this.decide(this.start());
  }

  private start(): string {
    return Buffer.concat(this.held).toString('latin1', 0, 256).replace(/^\u00ef\u00bb\u00bf/, '').trimStart().slice(0, 16).toLowerCase();
  }

  private decide(start: string): Buffer[] {
    this.decided = true;
    if (/^<(!doctype html|html|\?xml|head|body)\b/.test(start)) {
      throw runtimeError(`${this.what} starts like an HTML or XML page, not a dump (a login or error page?). Check base_url and the token.`, undefined, 'config_error');
    }
    const held = this.held;
    this.held = [];
    return held;
  }
}

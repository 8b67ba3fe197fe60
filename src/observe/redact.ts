/**
 * Masks secrets in text that leaves the process: every log line, error line
 * and protocol message that carries text passes through one of these. One per
 * command run; the run adds its secrets once it has read them.
 */
export class Redactor {
  private readonly secrets = new Set<string>();

  /** A value that must never appear in any output (too short a value would mask ordinary text, and cannot be a real token). */
  add(secret: string | undefined): void {
    if (secret && secret.length >= 4) this.secrets.add(secret);
  }

  redact(text: string): string {
    let out = text;
    for (const secret of this.secrets) {
      if (out.includes(secret)) out = out.split(secret).join('***');
    }
    return out;
  }
}

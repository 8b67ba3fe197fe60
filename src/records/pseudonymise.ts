import { createHmac } from 'node:crypto';

/**
 * Keyed pseudonyms of personal values: the lowercase hex HMAC-SHA256 of the
 * value's text under the pseudonymisation key. Unlike an unkeyed hash, no one
 * without the key can confirm a guess (hash the company's address list and
 * compare). The text is trimmed, and lower-cased when it holds an `@`, so one
 * person's address gives one pseudonym however the service capitalises it; a
 * value that is not a string is hashed as its JSON text, so JSONL and CSV
 * agree. Null and the empty string (an empty CSV cell) stay null: a pseudonym
 * of nothing would pass for a person.
 */
export class Pseudonymiser {
  /** Recent results: a dump repeats a person's values across their rows, and an HMAC costs about a microsecond. */
  private readonly recent = new Map<string, string>();
  private static readonly RECENT = 4096;
  private lastText: string | undefined;
  private lastDigest = '';

  constructor(private readonly key: string) {}

  /** The pseudonym of a value, or null. */
  pseudonym(value: unknown): string | null {
    const text = pseudonymText(value);
    return text === null ? null : this.hmac(text);
  }

  /** For an e-mail address, its pseudonym then `@` and its domain (`3f9a…@example.com`); for any other value, its pseudonym. */
  pseudonymKeepingDomain(value: unknown): string | null {
    const text = pseudonymText(value);
    if (text === null) return null;
    const at = text.lastIndexOf('@');
    return at === -1 ? this.hmac(text) : `${this.hmac(text)}${text.slice(at)}`;
  }

  /** A digest that changes with the key and says nothing about it: stored with a dump's Last-Modified so that a new key reads the dump again. */
  keyId(): string {
    return createHmac('sha256', this.key).update('tap-report-dump key id').digest('base64url').slice(0, 12);
  }

  private hmac(text: string): string {
    // A person's rows often come one after the other.
    if (text === this.lastText) return this.lastDigest;
    let digest = this.recent.get(text);
    if (digest === undefined) {
      digest = createHmac('sha256', this.key).update(text, 'utf8').digest('hex');
      if (this.recent.size >= Pseudonymiser.RECENT) this.recent.clear();
      this.recent.set(text, digest);
    }
    this.lastText = text;
    this.lastDigest = digest;
    return digest;
  }
}

/** The text a value is pseudonymised as, or null. */
export function pseudonymText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') return JSON.stringify(value);
  if (value === '') return null;
  const trimmed = value.trim();
  return trimmed.includes('@') ? trimmed.toLowerCase() : trimmed;
}

/**
 * Masks secrets in text that leaves the process: every log line, error line
 * and protocol message that carries text passes through one of these. One per
 * command run; the run adds its secrets once it has read them.
 *
 * A server may echo the Authorization header in another form than it was
 * sent, so each secret is masked in every form seen in the wild: as it is,
 * JSON-escaped (also with `\/`, as PHP writes it, and with non-ASCII as \u
 * escapes), URL-encoded (either hex case), and inside base64 or base64url text
 * (of the token alone or of `Bearer <token>`: the characters that encode only
 * the token's bytes, at each of the three byte alignments).
 */
export class Redactor {
  /** Every form of every secret, longest first, so that no form leaves a part of a longer one visible. */
  private forms: string[] = [];

  /** A value that must never appear in any output (a very short value would mask ordinary text, and cannot be a real token). */
  add(secret: string | undefined): void {
    if (!secret || secret.length < 4) return;
    const forms = new Set([...this.forms, ...secretForms(secret)]);
    this.forms = [...forms].sort((a, b) => b.length - a.length);
  }

  redact(text: string): string {
    let out = text;
    for (const form of this.forms) {
      if (out.includes(form)) out = out.split(form).join('***');
    }
    return out;
  }
}

/** Encoded forms shorter than this are not masked on their own: they would hit ordinary text. */
const MIN_FORM = 6;

export function secretForms(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  const asciiJson = json.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const url = encodeURIComponent(secret);
  const forms = [secret, json, json.replace(/\//g, '\\/'), asciiJson, asciiJson.replace(/\//g, '\\/'), url, url.replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase())];
  for (const bytes of [Buffer.from(secret, 'utf8'), Buffer.from(secret, 'latin1')]) forms.push(...base64Forms(bytes));
  return [secret, ...new Set(forms.filter((f) => f !== secret && f.length >= MIN_FORM))];
}

/**
 * The base64 and base64url characters that encode only `bytes`, wherever they
 * sit in a longer text: with 0, 1 or 2 unknown bytes before them, the first
 * characters also carry bits of those, and the last ones bits of what follows.
 */
function base64Forms(bytes: Buffer): string[] {
  const forms: string[] = [];
  for (const offset of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const first = Math.ceil((offset * 8) / 6);
    const last = Math.floor(((offset + bytes.length) * 8) / 6);
    const pure = encoded.slice(first, last);
    forms.push(pure, pure.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return forms;
}

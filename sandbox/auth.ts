import { createHash } from 'node:crypto';

/** A bearer token and the scopes it grants. */
export interface TokenGrant {
  readonly token: string;
  readonly scopes: readonly string[];
}

/** Accepted when no token is configured; grants every report scope. */
export const DEMO_TOKEN = 'demo-token';

/**
 * Parses `VALUE:SCOPE[,SCOPE...]`. Scope names contain colons, so the token is
 * the text before the first colon. An empty scope list is allowed (useful to test 403).
 */
export function parseTokenSpec(spec: string): TokenGrant {
  const colon = spec.indexOf(':');
  if (colon <= 0) throw new Error('invalid token spec: expected VALUE:SCOPE[,SCOPE...]');
  const token = spec.slice(0, colon);
  if (/\s/.test(token)) throw new Error('invalid token spec: the token must not contain white space');
  const scopes = spec
    .slice(colon + 1)
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return { token, scopes };
}

/** Parses SANDBOX_TOKENS: token specs separated by `;` (white space around them ignored). */
export function parseTokenList(text: string): TokenGrant[] {
  return text
    .split(';')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map(parseTokenSpec);
}

export type AuthResult =
  | { readonly ok: true; readonly scopes: ReadonlySet<string>; readonly credentialKey: string }
  | { readonly ok: false; readonly reason: 'missing' | 'malformed' | 'unknown' };

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

export class TokenStore {
  private readonly grants = new Map<string, ReadonlySet<string>>();

  constructor(grants: readonly TokenGrant[]) {
    for (const g of grants) {
      const scopes = new Set([...(this.grants.get(g.token) ?? []), ...g.scopes]);
      this.grants.set(g.token, scopes);
    }
  }

  get size(): number {
    return this.grants.size;
  }

  authenticate(header: string | undefined): AuthResult {
    if (header === undefined || header === '') return { ok: false, reason: 'missing' };
    const m = BEARER.exec(header);
    if (!m) return { ok: false, reason: 'malformed' };
    const scopes = this.grants.get(m[1]);
    if (!scopes) return { ok: false, reason: 'unknown' };
    // Rate-limit state is keyed by a digest so that tokens never sit in other structures or logs.
    return { ok: true, scopes, credentialKey: createHash('sha256').update(m[1]).digest('base64url') };
  }
}

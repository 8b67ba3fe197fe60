import { DEPARTMENTS, FIRST_NAMES, GROUP_COUNT, LAST_NAMES, asciiFold } from './catalog.js';
import { hashInts, rngFor } from './prng.js';

/** Identity of user number `u`; both reports draw from the same population. */
export interface UserAttributes {
  readonly userId: string;
  readonly email: string | null;
  readonly firstName: string | null;
  readonly lastName: string | null;
  readonly employeeNumber: string | null;
  readonly groupId: string | null;
  readonly department: string;
}

export function userId(u: number): string {
  return `usr-${String(u).padStart(7, '0')}`;
}

export function groupId(g: number): string {
  return `grp-${String(g + 1).padStart(2, '0')}`;
}

/** Users are generated from their own PRNG so that both reports agree on them. */
// Folding is slow and the name lists are short: fold each name once.
const folded = new Map<string, string>([...FIRST_NAMES, ...LAST_NAMES].map((n) => [n, asciiFold(n)]));

export class UserDirectory {
  // Training rows of one user are consecutive: a one-entry cache removes most of the work.
  private lastIndex = -1;
  private last: UserAttributes | null = null;

  constructor(private readonly seed: number) {}

  get(u: number): UserAttributes {
    if (u === this.lastIndex && this.last) return this.last;
    const rng = rngFor(this.seed, 'user', u);
    const firstName = rng.pick(FIRST_NAMES);
    const lastName = rng.pick(LAST_NAMES);
    const plusTag = u % 17 === 5; // some addresses need %2B in a query string
    const local = `${folded.get(firstName)}.${folded.get(lastName)}${plusTag ? '+sec' : ''}.${u}`;
    const attrs: UserAttributes = {
      userId: userId(u),
      email: rng.chance(0.02) ? null : `${local}@example.com`,
      firstName: rng.chance(0.01) ? null : firstName,
      lastName,
      employeeNumber: rng.chance(0.04) ? null : `E${String(100000 + u)}`,
      groupId: rng.chance(0.03) ? null : groupId(hashInts(this.seed, u, 3) % GROUP_COUNT),
      department: rng.pick(DEPARTMENTS),
    };
    this.lastIndex = u;
    this.last = attrs;
    return attrs;
  }
}

/**
 * A state (Singer's value, or Airbyte's list of STATE blobs) with every
 * stream's last passes dated two days back: the next run is a change pass
 * (its daily pass fell due), not a full one (due after 30 days).
 */
export function passDue<T>(state: T): T {
  const back = new Date(Date.now() - 2 * 86_400_000).toISOString();
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (typeof value !== 'object' || value === null) return value;
    return Object.fromEntries(Object.entries(value).map(([key, member]) => [key, (key === 'full_pass' || key === 'change_pass') && typeof member === 'object' ? { ...member, at: back, ...('due' in (member as object) ? { due: back } : {}) } : walk(member)]));
  };
  return walk(state) as T;
}

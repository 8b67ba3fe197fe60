/**
 * Objects keyed by field names. A service may name a field `constructor`,
 * `toString` or `__proto__`: as a key of a plain object such a name reads
 * what Object.prototype holds (`'constructor' in {}` is true) or, assigned,
 * replaces the object's prototype instead of adding a field. Every object the
 * tap keys by a served name is made here, without a prototype, and every
 * settings or schema object it reads by a served name is read through
 * `ownValue`, so a name is only ever data.
 */

/** An object without a prototype, keyed by field names; `entries` fill it in order. */
export function fieldRecord<T>(entries: Iterable<readonly [string, T]> = []): Record<string, T> {
  const record = Object.create(null) as Record<string, T>;
  for (const [name, value] of entries) record[name] = value;
  return record;
}

/** What `object` holds under `name` itself; never a value it inherits. */
export function ownValue<T>(object: Readonly<Record<string, T>> | undefined, name: string): T | undefined {
  return object !== undefined && Object.hasOwn(object, name) ? object[name] : undefined;
}

/** Whether `object` holds `name` itself. */
export function hasOwnField(object: object | undefined, name: string): boolean {
  return object !== undefined && object !== null && Object.hasOwn(object, name);
}

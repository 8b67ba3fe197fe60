/**
 * Instants are whole epoch seconds inside the sandbox; they are only turned
 * into text when a record is rendered, so filters compare instants, never strings.
 */

const DAY = 86_400;

/** The models generate their history in [WINDOW_START, WINDOW_END); placement.ts moves it on the calendar, and data written later (append/update) lies after it. */
export const WINDOW_START = Date.UTC(2024, 0, 1) / 1000;
export const WINDOW_END = Date.UTC(2026, 0, 1) / 1000;
export const SECONDS_PER_DAY = DAY;

/** Parses `Z`, `+HH:MM` or `-HH:MM` into minutes east of UTC. */
export function parseUtcOffset(text: string): number {
  if (text === 'Z' || text === 'z') return 0;
  const m = /^([+-])(\d{2}):(\d{2})$/.exec(text);
  if (!m || Number(m[2]) > 23 || Number(m[3]) > 59) {
    throw new Error(`invalid UTC offset ${JSON.stringify(text)}: expected Z, +HH:MM or -HH:MM`);
  }
  const minutes = Number(m[2]) * 60 + Number(m[3]);
  return m[1] === '-' ? -minutes : minutes;
}

function offsetSuffix(offsetMinutes: number): string {
  if (offsetMinutes === 0) return 'Z';
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

const TWO_DIGITS: readonly string[] = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
// Rendering dates dominates dump generation; days repeat a lot, so their text is cached.
const dayText = new Map<number, string>();
const suffixText = new Map<number, string>();

/** RFC 3339 with second precision; `offsetMinutes` changes the notation, never the instant. */
export function formatInstant(seconds: number, offsetMinutes = 0): string {
  const local = seconds + offsetMinutes * 60;
  const day = Math.floor(local / DAY);
  let date = dayText.get(day);
  if (date === undefined) {
    date = new Date(day * DAY * 1000).toISOString().slice(0, 10);
    if (dayText.size < 100_000) dayText.set(day, date);
  }
  let suffix = suffixText.get(offsetMinutes);
  if (suffix === undefined) {
    suffix = offsetSuffix(offsetMinutes);
    suffixText.set(offsetMinutes, suffix);
  }
  const t = local - day * DAY;
  const h = Math.floor(t / 3600);
  const m = Math.floor((t % 3600) / 60);
  return `${date}T${TWO_DIGITS[h]}:${TWO_DIGITS[m]}:${TWO_DIGITS[t % 60]}${suffix}`;
}

/** IMF-fixdate as used in HTTP headers. */
export function httpDate(ms: number): string {
  return new Date(ms).toUTCString();
}

import { FAKE_LAST_MODIFIED, sendDump, startFakeServer, type FakeServer } from './fake-server.js';
import type { JsonObject } from './messages.js';

/**
 * A service the sandbox cannot imitate: it serves records a test made by
 * hand, under names a test chose (`constructor`, names with control
 * characters …), in JSONL (members whose value is null left out, if asked)
 * and CSV, at the dump paths of both streams. Of the filters it applies
 * `completed` (the open rows' read) to a record's `completed`; the others
 * are ignored (the tap applies its own bounds to what it reads). Every
 * answer is a 200, but to a filter the test made it refuse (a 400, as the
 * sandbox's `rejectFilters` fault), with the Last-Modified the test set.
 */

export interface TenantDumps {
  /** Records by stream; a test may change them between runs. */
  training: readonly JsonObject[];
  phishing: readonly JsonObject[];
  /** JSONL lines leave out members whose value is null (CSV writes an empty cell). */
  omitNulls?: boolean;
  /** Filters the service does not know: a request that sends one is answered 400. */
  refuse?: readonly string[];
  /** The Last-Modified of every answer, read at each request (a getter may change it); null: none. FAKE_LAST_MODIFIED unless set. */
  lastModified?: string | null;
}

function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  // Quoted when it holds the delimiter, a quote or any control character (a tab must not look like a delimiter to the sniffer).
  return text === '' || /[",\u0000-\u001f]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The records as a CSV dump: a header of every name any record has, then one row each. */
function csvDump(records: readonly JsonObject[]): string {
  const names = [...new Set(records.flatMap((r) => Object.keys(r)))];
  const rows = records.map((r) => names.map((n) => csvCell(Object.hasOwn(r, n) ? r[n] : null)).join(','));
  return [names.map(csvCell).join(','), ...rows].map((line) => `${line}\r\n`).join('');
}

/** The records as a JSONL dump. */
function jsonlDump(records: readonly JsonObject[], omitNulls = false): string {
  return records.map((r) => `${JSON.stringify(omitNulls ? Object.fromEntries(Object.entries(r).filter(([, v]) => v !== null)) : r)}\n`).join('');
}

export function startTenantServer(dumps: TenantDumps): Promise<FakeServer> {
  return startFakeServer((_req, res, { path, query }) => {
    const match = /^\/public\/v1\/report\/(training|phishing)\/dump\.(jsonl|csv)$/.exec(path);
    if (!match) {
      res.writeHead(404).end();
      return;
    }
    const params = new URLSearchParams(query);
    const refused = dumps.refuse?.find((filter) => params.has(`filter[${filter}]`));
    if (refused !== undefined) {
      res.writeHead(400, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: `unknown filter: ${refused}` }));
      return;
    }
    const completed = params.get('filter[completed]');
    const records = dumps[match[1] as 'training' | 'phishing'].filter((r) => completed === null || r.completed === (completed === 'true'));
    const lastModified = dumps.lastModified === undefined ? FAKE_LAST_MODIFIED : dumps.lastModified;
    if (match[2] === 'csv') sendDump(res, csvDump(records), 'text/csv', lastModified);
    else sendDump(res, jsonlDump(records, dumps.omitNulls), 'application/jsonl', lastModified);
  });
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseByteRange, type Faults } from './faults.js';
import { readBody, sendError, sendJson } from './http-util.js';
import type { Sandbox } from './api.js';

const MAX_COUNT = 10_000_000;
/** Simulated days one request may advance: each scans the datasets a few times. */
const MAX_DAYS = 3650;

function parseCount(query: string, name = 'count'): number | string {
  const params = new URLSearchParams(query);
  const raw = params.get(name);
  if (raw === null) return 1;
  const max = name === 'days' ? MAX_DAYS : MAX_COUNT;
  if (!/^\d+$/.test(raw) || Number(raw) > max) return `${name} must be an integer between 0 and ${max}`;
  return Number(raw);
}

/** `at_request=N`: the change waits for the N-th dump request from now (1: the next) and is made just before it is served. */
function atRequest(query: string): number | string | undefined {
  const raw = new URLSearchParams(query).get('at_request');
  if (raw === null) return undefined;
  return /^[1-9]\d{0,5}$/.test(raw) ? Number(raw) : 'at_request must be an integer between 1 and 999999';
}

function numberOrNull(v: unknown, name: string): number | null {
  if (v === null) return null;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`${name} must be a number or null`);
  return v;
}

/** Validates the JSON body of POST /_admin/faults into a partial settings object. */
export function parseFaultsBody(text: string): Partial<Faults> {
  const body: unknown = JSON.parse(text === '' ? '{}' : text);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Error('expected a JSON object');
  const input = body as Record<string, unknown>;
  const out: Partial<Faults> = {};
  for (const [key, value] of Object.entries(input)) {
    switch (key) {
      case 'failRate':
      case 'dropRate':
      case 'latencyMs':
      case 'seed':
        if (typeof value !== 'number') throw new Error(`${key} must be a number`);
        out[key] = value;
        break;
      case 'rejectFilters':
        if (!Array.isArray(value) || value.some((s) => typeof s !== 'string')) throw new Error('rejectFilters must be an array of filter names');
        out.rejectFilters = value as string[];
        break;
      case 'failStatuses':
        if (!Array.isArray(value) || value.some((s) => typeof s !== 'number')) throw new Error('failStatuses must be an array of numbers');
        out.failStatuses = value as number[];
        break;
      case 'retryAfterSeconds':
        out.retryAfterSeconds = numberOrNull(value, key);
        break;
      case 'bodyBytesPerSecond':
        out.bodyBytesPerSecond = numberOrNull(value, key);
        break;
      case 'dropAfterBytes':
        if (typeof value === 'string') out.dropAfterBytes = parseByteRange(value);
        else if (Array.isArray(value) && value.length === 2 && value.every((n) => typeof n === 'number')) {
          out.dropAfterBytes = [value[0] as number, value[1] as number];
        } else out.dropAfterBytes = numberOrNull(value, key);
        break;
      default:
        throw new Error(`unknown fault setting ${JSON.stringify(key)}`);
    }
  }
  return out;
}

function changeBody(result: ReturnType<Sandbox['append']>): unknown {
  return { ...result, lastModified: result.lastModified.toUTCString() };
}

/**
 * Loopback-only control endpoints under /_admin/: no bearer token, no rate
 * limit, no faults. Used to change data while a client syncs.
 */
export async function handleAdmin(
  sandbox: Sandbox,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  query: string,
  fromLoopback: boolean,
): Promise<void> {
  if (!fromLoopback) {
    sendError(res, 403, { error: 'forbidden', message: 'admin endpoints accept loopback clients only' });
    return;
  }
  const method = req.method ?? 'GET';
  const allow = (methods: string): boolean => {
    if (methods.split(', ').includes(method)) return true;
    sendError(res, 405, { error: 'method_not_allowed', message: `${method} is not allowed here` }, { Allow: methods });
    return false;
  };

  if (path === '/_admin/health') {
    if (!allow('GET, HEAD')) return;
    const streams = Object.fromEntries(
      sandbox.streams().map((name) => [name, { records: sandbox.recordCount(name), lastModified: sandbox.lastModified(name).toUTCString() }]),
    );
    sendJson(res, 200, { status: 'ok', streams });
    return;
  }
  if (path === '/_admin/stats') {
    if (!allow('GET, HEAD')) return;
    sendJson(res, 200, sandbox.stats());
    return;
  }
  if (path === '/_admin/stats/reset') {
    if (!allow('POST')) return;
    sandbox.resetStats();
    sendJson(res, 200, sandbox.stats());
    return;
  }
  if (path === '/_admin/faults') {
    if (!allow('GET, HEAD, POST')) return;
    if (method !== 'POST') {
      sendJson(res, 200, sandbox.faults());
      return;
    }
    let changes: Partial<Faults>;
    try {
      changes = parseFaultsBody(await readBody(req));
      sendJson(res, 200, sandbox.setFaults(changes));
    } catch (error) {
      sendError(res, 400, { error: 'invalid_faults', message: error instanceof Error ? error.message : String(error) });
    }
    return;
  }
  if (path === '/_admin/simulate') {
    if (!allow('POST')) return;
    const days = parseCount(query, 'days');
    if (typeof days === 'string') {
      sendError(res, 400, { error: 'invalid_parameter', message: days, parameter: 'days' });
      return;
    }
    const at = atRequest(query);
    if (typeof at === 'string') {
      sendError(res, 400, { error: 'invalid_parameter', message: at, parameter: 'at_request' });
      return;
    }
    if (at !== undefined) {
      sandbox.beforeRequest(at, () => sandbox.simulateDays(days));
      sendJson(res, 202, { scheduled: { days, atRequest: at } });
      return;
    }
    sendJson(res, 200, { days: sandbox.simulateDays(days) });
    return;
  }
  const m = /^\/_admin\/([a-z]+)\/(append|update)$/.exec(path);
  const stream = m && sandbox.streams().includes(m[1]) ? m[1] : undefined;
  if (m && stream) {
    if (!allow('POST')) return;
    const count = parseCount(query);
    if (typeof count === 'string') {
      sendError(res, 400, { error: 'invalid_parameter', message: count, parameter: 'count' });
      return;
    }
    const at = atRequest(query);
    if (typeof at === 'string') {
      sendError(res, 400, { error: 'invalid_parameter', message: at, parameter: 'at_request' });
      return;
    }
    const change = (): ReturnType<Sandbox['append']> => (m[2] === 'append' ? sandbox.append(stream, count) : sandbox.update(stream, count));
    if (at !== undefined) {
      sandbox.beforeRequest(at, change);
      sendJson(res, 202, { scheduled: { [m[2]]: count, stream, atRequest: at } });
      return;
    }
    sendJson(res, 200, changeBody(change()));
    return;
  }
  sendError(res, 404, { error: 'not_found', message: `no admin endpoint at ${path}` });
}

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

/** One admin request: what its handler reads and answers with. */
interface AdminRequest {
  sandbox: Sandbox;
  req: IncomingMessage;
  res: ServerResponse;
  query: string;
  method: string;
  /** True when the request's method is one of `methods`; else answers 405 naming them. */
  allow(methods: string): boolean;
}

/** Answers 400 naming `parameter` when parsing it gave a message instead of a value. */
function badParameter(res: ServerResponse, value: unknown, parameter: string): value is string {
  if (typeof value !== 'string') return false;
  sendError(res, 400, { error: 'invalid_parameter', message: value, parameter });
  return true;
}

/** Makes `change` now (200, with `answer` of its result), or, with `at_request`, just before that dump request (202, `scheduled`). */
function changeNowOrLater<T>(r: AdminRequest, change: () => T, scheduled: Record<string, unknown>, answer: (result: T) => unknown): void {
  const at = atRequest(r.query);
  if (badParameter(r.res, at, 'at_request')) return;
  if (at !== undefined) {
    r.sandbox.beforeRequest(at, change);
    sendJson(r.res, 202, { scheduled: { ...scheduled, atRequest: at } });
    return;
  }
  sendJson(r.res, 200, answer(change()));
}

function health(r: AdminRequest): void {
  if (!r.allow('GET, HEAD')) return;
  const streams = Object.fromEntries(r.sandbox.streams().map((name) => [name, { records: r.sandbox.recordCount(name), lastModified: r.sandbox.lastModified(name).toUTCString() }]));
  sendJson(r.res, 200, { status: 'ok', streams });
}

function stats(r: AdminRequest): void {
  if (!r.allow('GET, HEAD')) return;
  sendJson(r.res, 200, r.sandbox.stats());
}

function resetStats(r: AdminRequest): void {
  if (!r.allow('POST')) return;
  r.sandbox.resetStats();
  sendJson(r.res, 200, r.sandbox.stats());
}

async function faults(r: AdminRequest): Promise<void> {
  if (!r.allow('GET, HEAD, POST')) return;
  if (r.method !== 'POST') {
    sendJson(r.res, 200, r.sandbox.faults());
    return;
  }
  try {
    sendJson(r.res, 200, r.sandbox.setFaults(parseFaultsBody(await readBody(r.req))));
  } catch (error) {
    sendError(r.res, 400, { error: 'invalid_faults', message: error instanceof Error ? error.message : String(error) });
  }
}

function simulate(r: AdminRequest): void {
  if (!r.allow('POST')) return;
  const days = parseCount(r.query, 'days');
  if (badParameter(r.res, days, 'days')) return;
  changeNowOrLater(r, () => r.sandbox.simulateDays(days), { days }, (simulated) => ({ days: simulated }));
}

function changeRows(r: AdminRequest, stream: string, kind: 'append' | 'update'): void {
  if (!r.allow('POST')) return;
  const count = parseCount(r.query);
  if (badParameter(r.res, count, 'count')) return;
  const change = (): ReturnType<Sandbox['append']> => (kind === 'append' ? r.sandbox.append(stream, count) : r.sandbox.update(stream, count));
  changeNowOrLater(r, change, { [kind]: count, stream }, changeBody);
}

const ROUTES = new Map<string, (r: AdminRequest) => void | Promise<void>>([
  ['/_admin/health', health],
  ['/_admin/stats', stats],
  ['/_admin/stats/reset', resetStats],
  ['/_admin/faults', faults],
  ['/_admin/simulate', simulate],
]);

/**
 * Loopback-only control endpoints under /_admin/: no bearer token, no rate
 * limit, no faults. Used to change data while a client syncs.
 */
export async function handleAdmin(sandbox: Sandbox, req: IncomingMessage, res: ServerResponse, path: string, query: string, fromLoopback: boolean): Promise<void> {
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
  const r: AdminRequest = { sandbox, req, res, query, method, allow };
  const route = ROUTES.get(path);
  if (route !== undefined) return route(r);
  const m = /^\/_admin\/([a-z]+)\/(append|update)$/.exec(path);
  if (m && sandbox.streams().includes(m[1])) return changeRows(r, m[1], m[2] as 'append' | 'update');
  sendError(res, 404, { error: 'not_found', message: `no admin endpoint at ${path}` });
}

import { createReadStream } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { handleAdmin } from './admin.js';
import { DEMO_TOKEN, TokenStore } from './auth.js';
import { Dataset, NO_FILTER, type ChangeResult } from './dataset.js';
import { dumpLines, matchingRecords, writeDump, type DumpSource } from './dump-writer.js';
import { DumpOrder } from './dump-order.js';
import { ORDERS, isOrderName } from './order.js';
import { FaultInjector, type Faults } from './faults.js';
import { FilterError, compileFilters, normaliseFilterKeys, parseFilterQuery } from './filters.js';
import { acceptsGzip, isLoopback, sendError, sleep, splitTarget } from './http-util.js';
import type { DumpRequestSeen, Sandbox, SandboxStats } from './api.js';
import type { StreamModel } from './model.js';
import { DEFAULT_OPTIONS, tokenGrants, validateCounts, type SandboxOptions, type ServedReport } from './options.js';
import { createPhishingModel } from './phishing-model.js';
import { PrerenderCache } from './prerender.js';
import { anchoredPlacement, newestGenerated, parseAnchor, placementBefore, type Placement } from './placement.js';
import { RateLimiter } from './rate-limit.js';
import { RecordRenderer } from './render.js';
import { createResponseSink } from './response-sink.js';
import { sendFileBody } from './file-body.js';
import { httpDate, parseUtcOffset } from './time.js';
import { createTrainingModel } from './training-model.js';
import { LAYOUTS, layoutFor, type Layout } from './layout.js';
import { simulateDay, type DayChanges } from './churn.js';
import { isTimeZone } from '../src/time-zone.js';
import { FORMATS, MEDIA_TYPES, type DumpFormat } from '../src/catalog/reports.js';

export type { DumpRequestSeen, Sandbox, SandboxStats } from './api.js';
export type { SandboxOptions } from './options.js';
export type { Faults } from './faults.js';
export type { TokenGrant } from './auth.js';
export type { RateLimit } from './rate-limit.js';
export type { ChangeResult } from './dataset.js';
export { DEMO_TOKEN } from './auth.js';
export { FilterError } from './filters.js';

interface Route {
  readonly dataset: Dataset;
  readonly format: DumpFormat;
}

const ALLOW = 'GET, HEAD';

/** A service that does not know a filter answers 400 naming it (the `rejectFilters` fault). */
function refuseFilters(filters: ReadonlyMap<string, string>, refused: readonly string[]): void {
  for (const name of refused) {
    if (filters.has(name)) throw new FilterError('unknown_filter', `filter[${name}]`, 'this service does not support this filter');
  }
}

function newStats(): SandboxStats {
  return { requests: 0, byStatus: {}, injectedFailures: 0, dropped: 0 };
}

class SandboxServer implements Sandbox {
  url = '';
  port = 0;
  readonly usingDemoToken: boolean;
  private readonly server: Server;
  private readonly datasets = new Map<string, Dataset>();
  private readonly renderers = new Map<string, RecordRenderer>();
  private readonly layout: Layout;
  private readonly orders = new Map<string, DumpOrder>();
  private readonly routes = new Map<string, Route>();
  private readonly tokens: TokenStore;
  private readonly limiter: RateLimiter | null;
  private readonly injector: FaultInjector;
  private readonly prerendered: PrerenderCache | null;
  private counters = newStats();
  /** Changes waiting for a dump request: each is made just before the request that brings its count to zero. */
  private readonly pending: Array<{ requests: number; change: () => void }> = [];
  /** The filters of the last dump requests, for tests (in memory only: they may hold personal data, so they are never logged). */
  private readonly recent: DumpRequestSeen[] = [];

  constructor(readonly options: Readonly<SandboxOptions>) {
    validateCounts(options);
    const offsetMinutes = parseUtcOffset(options.dateOffset);
    if (!LAYOUTS.includes(options.layout)) throw new Error(`unknown layout ${JSON.stringify(options.layout)}: use ${LAYOUTS.join(', ')}`);
    if (!isOrderName(options.order)) throw new Error(`unknown order ${JSON.stringify(options.order)}: use ${ORDERS.join(', ')}`);
    if (!isTimeZone(options.layoutTimeZone)) throw new Error(`unknown time zone ${JSON.stringify(options.layoutTimeZone)}: use an IANA name such as Europe/Berlin`);
    const layout = layoutFor(options.layout, { offsetMinutes, timeZone: options.layoutTimeZone });
    this.layout = layout;
    const served: ServedReport[] = [
      { model: createTrainingModel(options.seed), records: options.trainingRecords },
      { model: createPhishingModel(options.seed, options.phishingRecords), records: options.phishingRecords },
      ...options.extraReports,
    ];
    const place = placer(options);
    for (const { model, records } of served) {
      const { name, path } = model.descriptor;
      const dataset = new Dataset(model, options.seed, records, place(model, records));
      this.datasets.set(name, dataset);
      this.renderers.set(name, new RecordRenderer(model.fields, { stream: name, layout, extraFields: options.extraFields }));
      this.orders.set(name, new DumpOrder(dataset, options.order, options.seed));
      for (const format of FORMATS) this.routes.set(`${path}.${format}`, { dataset, format });
    }
    const grants = tokenGrants(options.tokens);
    this.usingDemoToken = grants.length === 0;
    this.tokens = new TokenStore(this.usingDemoToken ? [{ token: DEMO_TOKEN, scopes: served.map((r) => r.model.descriptor.scope) }] : grants);
    this.limiter = options.rateLimit ? new RateLimiter(options.rateLimit) : null;
    this.injector = new FaultInjector(options.faults);
    this.prerendered = options.prerender ? new PrerenderCache() : null;
    this.server = createServer((req, res) => this.handle(req, res));
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port, this.options.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    const address = this.server.address() as AddressInfo;
    this.port = address.port;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    this.url = `http://${host}:${address.port}`;
    if (this.prerendered) {
      // Render ahead so that the first benchmark request does not pay for it.
      await Promise.all(
        [...this.datasets.keys()].flatMap((stream) =>
          FORMATS.flatMap((format) =>
            (this.options.prerenderGzip ? [false, true] : [false]).map((gzip) =>
              this.prerendered!.file(stream, format, gzip, this.source(stream, format, NO_FILTER)),
            ),
          ),
        ),
      );
    }
  }

  get requestCount(): number {
    return this.counters.requests;
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
    await this.prerendered?.close();
  }

  private dataset(stream: string): Dataset {
    const d = this.datasets.get(stream);
    if (!d) throw new Error(`unknown stream ${JSON.stringify(stream)}`);
    return d;
  }

  append(stream: string, count: number): ChangeResult {
    checkCount(count);
    return this.dataset(stream).append(count, Date.now());
  }

  update(stream: string, count: number): ChangeResult {
    checkCount(count);
    return this.dataset(stream).update(count, Date.now());
  }

  simulateDays(days: number): DayChanges[] {
    checkCount(days);
    const streams = { training: this.dataset('training'), phishing: this.dataset('phishing') };
    return Array.from({ length: days }, () => simulateDay(streams, this.options.seed, Date.now()));
  }

  beforeRequest(request: number, change: () => void): void {
    if (!Number.isInteger(request) || request < 1) throw new Error(`request must be an integer >= 1, got ${request}`);
    this.pending.push({ requests: request, change });
  }

  /** Makes the changes whose dump request has come, in the order they were asked for. */
  private applyDueChanges(): void {
    for (const entry of [...this.pending]) {
      if (--entry.requests > 0) continue;
      this.pending.splice(this.pending.indexOf(entry), 1);
      entry.change();
    }
  }

  setFaults(faults: Partial<Faults>): Faults {
    return this.injector.set(faults);
  }

  faults(): Faults {
    return this.injector.current;
  }

  lastModified(stream: string): Date {
    return this.dataset(stream).lastModified;
  }

  requestsSeen(): DumpRequestSeen[] {
    return this.recent.map((r) => ({ ...r, filters: { ...r.filters } }));
  }

  streams(): string[] {
    return [...this.datasets.keys()];
  }

  recordCount(stream: string): number {
    return this.dataset(stream).liveCount;
  }

  stats(): SandboxStats {
    return { ...this.counters, byStatus: { ...this.counters.byStatus } };
  }

  resetStats(): void {
    this.counters = newStats();
  }

  private source(stream: string, format: DumpFormat, filters: ReadonlyMap<string, string> | typeof NO_FILTER): DumpSource {
    const dataset = this.dataset(stream);
    const filter = filters instanceof Map ? dataset.compileFilter(compileFilters(dataset.model.descriptor, filters, this.layout.filters)) : NO_FILTER;
    const snapshot = dataset.snapshot();
    const rows = this.orders.get(stream)!.rows(snapshot);
    return { dataset, snapshot, renderer: this.renderers.get(stream)!, format, filter, rows };
  }

  *records(stream: string, filters: Readonly<Record<string, string>> = {}): Iterable<Record<string, unknown>> {
    const source = this.source(stream, 'jsonl', normaliseFilterKeys(filters));
    for (const record of matchingRecords(source)) yield source.renderer.toObject(record);
  }

  dump(stream: string, format: DumpFormat, filters: Readonly<Record<string, string>> = {}): string {
    return [...dumpLines(this.source(stream, format, normaliseFilterKeys(filters)))].join('');
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const started = Date.now();
    const { path, query } = splitTarget(req.url);
    // A client that goes away mid-body must not crash the process.
    res.on('error', () => undefined);
    const route = this.routes.get(path);
    if (route) {
      this.counters.requests++;
      res.on('close', () => {
        const key = String(res.statusCode);
        this.counters.byStatus[key] = (this.counters.byStatus[key] ?? 0) + 1;
      });
    }
    if (this.options.verbose) {
      // Path only: query strings can hold personal data (e-mail filters); headers hold tokens.
      res.on('close', () =>
        this.options.log(`${req.method} ${path} ${res.statusCode} ${Date.now() - started}ms${res.writableFinished ? '' : ' (incomplete)'}`),
      );
    }
    const work = route
      ? this.handleDump(req, res, route, query)
      : path.startsWith('/_admin/')
        ? handleAdmin(this, req, res, path, query, isLoopback(req.socket.remoteAddress))
        : Promise.resolve(sendError(res, 404, { error: 'not_found', message: `no endpoint at ${path}` }));
    work.catch((error: unknown) => {
      this.options.log(`sandbox: request failed: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) sendError(res, 500, { error: 'internal_error', message: 'internal error' });
      else res.destroy();
    });
  }

  private async handleDump(req: IncomingMessage, res: ServerResponse, route: Route, query: string): Promise<void> {
    const { dataset, format } = route;
    const descriptor = dataset.model.descriptor;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendError(res, 405, { error: 'method_not_allowed', message: `${req.method} is not allowed; use GET` }, { Allow: ALLOW });
      return;
    }
    this.applyDueChanges();
    const latency = this.injector.current.latencyMs;
    if (latency > 0) await sleep(latency);

    if (!this.admitted(req, res, descriptor.scope)) return;
    let source: DumpSource;
    let filtered: boolean;
    try {
      const filters = parseFilterQuery(query);
      filtered = filters.size > 0;
      this.recent.push({ stream: descriptor.name, format, filters: Object.fromEntries(filters) });
      if (this.recent.length > 100) this.recent.shift();
      refuseFilters(filters, this.injector.current.rejectFilters);
      source = this.source(descriptor.name, format, filters);
    } catch (error) {
      if (!(error instanceof FilterError)) throw error;
      sendError(res, 400, { error: error.code, message: error.message, parameter: error.parameter });
      return;
    }

    const fault = this.injector.decide();
    if (fault.failStatus !== null) {
      this.counters.injectedFailures++;
      const retryAfter = this.injector.current.retryAfterSeconds;
      const headers = fault.failStatus === 503 && retryAfter !== null ? { 'Retry-After': String(retryAfter) } : undefined;
      sendError(res, fault.failStatus, { error: 'injected_fault', message: `injected failure (status ${fault.failStatus})` }, headers);
      return;
    }

    const lastModified = source.snapshot.lastModified;
    const common = { 'Last-Modified': httpDate(lastModified), Vary: 'Accept-Encoding', 'Cache-Control': 'private, no-cache' };
    const since = Date.parse(req.headers['if-modified-since'] ?? '');
    if (!Number.isNaN(since) && since >= lastModified) {
      res.writeHead(304, common);
      res.end();
      return;
    }

    const gzip = acceptsGzip(req.headers['accept-encoding']);
    const headers: Record<string, string | number> = {
      ...common,
      'Content-Type': MEDIA_TYPES[format],
      'Content-Disposition': `attachment; filename="${descriptor.name}.${format}"`,
    };
    if (gzip) headers['Content-Encoding'] = 'gzip';

    const file = this.prerendered && !filtered ? await this.prerenderedFile(source, gzip) : null;
    if (file && (file.compressed || !gzip)) headers['Content-Length'] = file.size;
    res.writeHead(200, headers);
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    res.flushHeaders();
    await this.sendDumpBody(res, source, file, { gzip: gzip && !file?.compressed, dropAfterBytes: fault.dropAfterBytes });
  }

  /** The body: a pre-rendered file as it is when no body fault applies, else through the sink that compresses and injects faults. */
  private async sendDumpBody(res: ServerResponse, source: DumpSource, file: PrerenderedFile | null, body: { gzip: boolean; dropAfterBytes: number | null }): Promise<void> {
    const bytesPerSecond = this.injector.current.bodyBytesPerSecond;
    if (file && !body.gzip && body.dropAfterBytes === null && bytesPerSecond === null) return sendFileBody(res, file.path, file.size);
    const sink = createResponseSink(res, { ...body, bytesPerSecond, onDrop: () => this.counters.dropped++ });
    if (file) {
      await pipeline(createReadStream(file.path), sink.head).catch(() => undefined);
    } else {
      await writeDump(source, sink.head, sink.stopped);
      if (sink.stopped()) sink.head.destroy();
      else sink.head.end();
    }
    await sink.done;
  }

  /** Authentication (401), rate limit (429) and scope (403), in that order; false when an error was sent. */
  private admitted(req: IncomingMessage, res: ServerResponse, scope: string): boolean {
    const auth = this.tokens.authenticate(req.headers.authorization);
    if (!auth.ok) {
      const message =
        auth.reason === 'missing'
          ? 'missing Authorization header; send Authorization: Bearer <token>'
          : auth.reason === 'malformed'
            ? 'malformed Authorization header; expected Bearer <token>'
            : 'unknown or revoked token';
      const challenge = auth.reason === 'missing' ? 'Bearer realm="report-dump"' : 'Bearer realm="report-dump", error="invalid_token"';
      sendError(res, 401, { error: 'unauthorized', message }, { 'WWW-Authenticate': challenge });
      return false;
    }
    if (this.limiter) {
      const decision = this.limiter.check(auth.credentialKey, Date.now());
      if (!decision.allowed) {
        const retryAfter = decision.retryAfterSeconds;
        sendError(
          res,
          429,
          { error: 'rate_limited', message: `rate limit exceeded; retry in ${retryAfter} s`, retryAfter },
          { 'Retry-After': String(retryAfter) },
        );
        return false;
      }
    }
    if (!auth.scopes.has(scope)) {
      sendError(
        res,
        403,
        { error: 'insufficient_scope', message: `the token lacks scope ${scope}`, scope: scope },
        { 'WWW-Authenticate': `Bearer realm="report-dump", error="insufficient_scope", scope="${scope}"` },
      );
      return false;
    }
    return true;
  }

  private async prerenderedFile(source: DumpSource, gzip: boolean): Promise<PrerenderedFile | null> {
    const stream = source.dataset.model.descriptor.name;
    const compressed = gzip && this.options.prerenderGzip;
    try {
      const file = await this.prerendered!.file(stream, source.format, compressed, source);
      return { ...file, compressed };
    } catch {
      return null;
    }
  }
}

/** A pre-rendered dump file, and whether it is the gzip one. */
interface PrerenderedFile {
  path: string;
  size: number;
  compressed: boolean;
}

/** Where each dataset's dates lie: before the anchor day when there is one, else ending the day before the clock. */
function placer(options: Readonly<SandboxOptions>): (model: StreamModel, records: number) => Placement {
  if (options.anchor !== null) {
    const placement = anchoredPlacement(parseAnchor(options.anchor));
    return () => placement;
  }
  const nowMs = options.now?.getTime() ?? Date.now();
  return (model, records) => placementBefore(newestGenerated(model, records), nowMs, options.simulateDays);
}

function checkCount(count: number): void {
  if (!Number.isSafeInteger(count) || count < 0) throw new Error(`count must be a non-negative integer, got ${count}`);
}

/**
 * Starts the reference report dump service on `options.host:options.port`
 * (default 127.0.0.1, a free port). Resolves once it accepts connections.
 */
export async function startSandbox(options: Partial<SandboxOptions> = {}): Promise<Sandbox> {
  const resolved: SandboxOptions = { ...DEFAULT_OPTIONS, ...stripUndefined(options) };
  const sandbox = new SandboxServer(resolved);
  if (resolved.simulateDays > 0) sandbox.simulateDays(resolved.simulateDays);
  await sandbox.listen();
  return sandbox;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

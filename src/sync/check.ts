import { RetryBudget, type DumpClient } from '../http/client.js';
import { IdleTimeoutError, unreachableHost } from '../http/transport.js';
import { describeError, TapError } from '../errors.js';
import { HttpStatusError } from '../http/responses.js';
import { checkQuery, refusedCheckAdvice } from './check-query.js';
import { createClient } from './run.js';
import type { Config } from '../config/config.js';
import type { StreamDescriptor } from '../catalog/reports.js';
import type { Logger } from '../observe/log.js';

export interface StreamCheck {
  stream: string;
  ok: boolean;
  message: string;
  /** Why the stream is not readable, for a face that words it its own way. */
  error?: TapError;
}

/** The longest check waits to connect and for the headers: an orchestrator's connection test must answer in seconds. */
const CHECK_TIMEOUT_S = 5;

/**
 * Verifies reachability, the token, each stream's dump scope and the filters
 * its first sync sends with one tiny request per stream (check-query.ts):
 * one attempt each, no backoff, at most
 * min(request_timeout, 5 s) to connect and get the headers, the streams at
 * once, so a server that never answers costs one such wait.
 */
export async function checkStreams(config: Config, streams: readonly StreamDescriptor[], logger: Logger, redact: (text: string) => string): Promise<StreamCheck[]> {
  const timeoutS = Math.min(config.request_timeout, CHECK_TIMEOUT_S);
  const client = createClient({ ...config, request_timeout: timeoutS, max_retries: 0 }, logger, redact);
  try {
    return await Promise.all(streams.map((descriptor) => checkStream(config, client, descriptor, timeoutS)));
  } finally {
    await client.close();
  }
}

async function checkStream(config: Config, client: DumpClient, descriptor: StreamDescriptor, timeoutS: number): Promise<StreamCheck> {
  const budget = new RetryBudget();
  const query = checkQuery(descriptor, config);
  try {
    const response = await client.open({ stream: descriptor, format: config.format, query }, budget);
    if (response.status === 200) response.abort();
    return { stream: descriptor.name, ok: true, message: `readable (token has scope ${descriptor.scope})` };
  } catch (error) {
    if (!(error instanceof TapError)) throw error;
    if (error instanceof HttpStatusError && error.status === 400) {
      return { stream: descriptor.name, ok: false, message: `${error.message} ${refusedCheckAdvice(descriptor, query, config, error.detail)}`, error };
    }
    return { stream: descriptor.name, ok: false, message: failure(descriptor.name, error, budget, new URL(config.base_url), timeoutS), error };
  }
}

/** Why one attempt failed, said for check: it tried once, so "gave up after retries" and "raise max_retries" do not apply. */
function failure(stream: string, error: TapError, budget: RetryBudget, baseUrl: URL, timeoutS: number): string {
  const unreachable = unreachableHost(budget.lastError, baseUrl);
  if (unreachable) return `${stream} dump: ${unreachable} (${(budget.lastError as NodeJS.ErrnoException).code}). Check base_url, and that this machine reaches the service.`;
  if (budget.lastError instanceof IdleTimeoutError) {
    return `${stream} dump: ${baseUrl.host} did not answer within ${timeoutS} s (check waits at most ${CHECK_TIMEOUT_S} s, or request_timeout when shorter). Check base_url, and that the service is up.`;
  }
  // A status worth retrying (a 503, say) or another connection failure: what happened, without the retry advice.
  if (error.failureType === 'transient_error' && budget.lastFailure) return `${stream} dump: ${budget.lastFailure} (check tries each stream once).`;
  return describeError(error);
}

import { RetryBudget, type DumpClient, type DumpRequest } from '../../http/client.js';
import type { ReadResult } from '../run-state.js';

/**
 * Whether the reads of a pass of several reads saw one unchanged source: a
 * row that changed between two reads may be in neither (completed after the
 * open rows were read, reopened after the completed ones were), and a pass
 * that deleted every row it did not see would delete it. Once the last read
 * is done, every earlier read is asked again with If-Modified-Since its own
 * Last-Modified: a 304 (or, from a service that ignores the header, the same
 * Last-Modified, its body left unread) proves that its answer did not change
 * while the later reads ran, whether the service stamps the whole report or
 * each filtered answer. Without a Last-Modified nothing can be proved.
 */
export type SourceCheck = { readonly kind: 'moved' | 'unknown'; readonly detail: string } | undefined;

/** What a check asks of the client, and how each read was requested. */
export interface SourceCheckContext {
  readonly client: Pick<DumpClient, 'open'>;
  readonly request: (result: ReadResult) => DumpRequest;
}

export async function checkSource(results: readonly ReadResult[], context: SourceCheckContext): Promise<SourceCheck> {
  if (results.length < 2) return undefined;
  const stamps = results.map((r) => (r.outcome.status === 200 ? r.outcome.lastModified : undefined));
  if (stamps.some((stamp) => stamp === undefined || Number.isNaN(Date.parse(stamp)))) {
    return { kind: 'unknown', detail: `the service sent no usable Last-Modified with its ${results.length} reads (${stamps.map((stamp) => stamp ?? 'none').join(', ')})` };
  }
  for (const [i, result] of results.slice(0, -1).entries()) {
    const since = stamps[i]!;
    if (!(await unchangedSince(context.client, context.request(result), since))) {
      return { kind: 'moved', detail: `the answer to its ${result.plan.kind.replace('_', ' ')} read changed after it was read (Last-Modified ${since} then)` };
    }
  }
  return undefined;
}

/** Asks the read again, conditionally: whether its answer is the one it had at `since`. */
async function unchangedSince(client: Pick<DumpClient, 'open'>, request: DumpRequest, since: string): Promise<boolean> {
  const response = await client.open({ ...request, ifModifiedSince: since }, new RetryBudget());
  if (response.status === 304) return true;
  response.abort();
  return response.lastModified !== undefined && Date.parse(response.lastModified) === Date.parse(since);
}

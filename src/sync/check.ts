import { DumpClient, RetryBudget } from '../http/client.js';
import { describeError, TapError } from '../errors.js';
import type { Config } from '../config/config.js';
import type { SelectedStream } from '../catalog/selection.js';

export interface StreamCheck {
  stream: string;
  ok: boolean;
  message: string;
}

/** A date no record has: the dump comes back empty, so checking costs no download. */
const FAR_FUTURE = '>=9999-12-31T00:00:00Z';

/** Verifies reachability, the token and each selected dump's scope with one tiny request per stream. */
export async function checkStreams(config: Config, client: DumpClient, streams: SelectedStream[]): Promise<StreamCheck[]> {
  const results: StreamCheck[] = [];
  for (const { descriptor } of streams) {
    try {
      const response = await client.open(
        { stream: descriptor, format: config.format, query: [[`filter[${descriptor.replicationFilter}]`, FAR_FUTURE]] },
        new RetryBudget(),
      );
      if (response.status === 200) response.abort();
      results.push({ stream: descriptor.name, ok: true, message: `readable (token has scope ${descriptor.scope})` });
    } catch (error) {
      if (!(error instanceof TapError)) throw error;
      results.push({ stream: descriptor.name, ok: false, message: describeError(error) });
    }
  }
  return results;
}

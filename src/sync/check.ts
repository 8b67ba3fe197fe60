import { DumpClient, RetryBudget } from '../http/client.js';
import { describeError, TapError } from '../errors.js';
import { dateFilterText } from '../http/query.js';
import type { Config } from '../config/config.js';
import type { StreamDescriptor } from '../catalog/reports.js';

export interface StreamCheck {
  stream: string;
  ok: boolean;
  message: string;
  /** Why the stream is not readable, for a face that words it its own way. */
  error?: TapError;
}

/** A date no record has (9999-12-31): the dump comes back empty, so checking costs no download. */
const FAR_FUTURE_MS = 253_402_214_400_000;

/** Verifies reachability, the token and each stream's dump scope with one tiny request per stream. */
export async function checkStreams(config: Config, client: DumpClient, streams: readonly StreamDescriptor[]): Promise<StreamCheck[]> {
  const results: StreamCheck[] = [];
  for (const descriptor of streams) {
    try {
      const response = await client.open(
        { stream: descriptor, format: config.format, query: [[`filter[${descriptor.replicationFilter}]`, `>=${dateFilterText(FAR_FUTURE_MS, config.filter_date_format)}`]] },
        new RetryBudget(),
      );
      if (response.status === 200) response.abort();
      results.push({ stream: descriptor.name, ok: true, message: `readable (token has scope ${descriptor.scope})` });
    } catch (error) {
      if (!(error instanceof TapError)) throw error;
      results.push({ stream: descriptor.name, ok: false, message: describeError(error), error });
    }
  }
  return results;
}

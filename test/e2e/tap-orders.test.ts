import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OrderName } from '../../sandbox/order.js';
import { ensureBuilt } from '../helpers/build.js';
import { syncOk, type TapRun } from '../helpers/cli.js';
import { type JsonObject, lastState, recordsOf, type StateValue } from '../helpers/messages.js';
import { canonical } from '../helpers/records.js';
import { type Sandbox, sandboxRecords, startTestSandbox, STREAM_NAMES, tapConfig } from '../helpers/sandbox.js';

/**
 * The tap's output does not depend on the order of the dump: the same records
 * served ascending or descending by the replication key, shuffled or grouped
 * by user give the same RECORD lines and the same bookmark as the default
 * order, on a full sync and on an incremental run whose bookmark has ties.
 */

const ORDERS: readonly OrderName[] = ['generated', 'ascending', 'descending', 'shuffled', 'grouped'];

/** The RECORD lines of a run, byte for byte but for time_extracted (the run's clock), sorted. */
function recordLines(run: TapRun): string[] {
  return run.stdout
    .split('\n')
    .filter((line) => line.startsWith('{"type":"RECORD"'))
    .map((line) => line.replace(/"time_extracted":"[^"]*"/, '"time_extracted":"-"').replace(/"version":\d+/, '"version":-'))
    .sort();
}

/** The last STATE line a run wrote, as its bytes, but for when each run's full pass ran and fell due (and so its table version). */
function stateLine(run: TapRun): string {
  const line = run.stdout.split('\n').filter((l) => l.startsWith('{"type":"STATE"')).at(-1) ?? '';
  return line.replace(/"full_pass":\{"at":"[^"]*","due":"[^"]*","version":\d+/g, '"full_pass":{"at":"-","due":"-","version":-');
}

/**
 * A training instant shared by several records of one group and by records of
 * other groups: a run filtered to that group and to records up to the instant
 * ends with ties at its maximum, and leaves ties at the bookmark unsent.
 */
function partialTies(records: readonly JsonObject[]): { value: string; group: string; inGroup: number; tied: number } {
  const byInstant = new Map<string, JsonObject[]>();
  for (const r of records) if (typeof r.completedAt === 'string') byInstant.set(r.completedAt, [...(byInstant.get(r.completedAt) ?? []), r]);
  const candidates = [...byInstant].flatMap(([value, tied]) =>
    [...new Set(tied.map((r) => r.groupId))]
      .filter((g): g is string => typeof g === 'string')
      .map((group) => ({ value, group, inGroup: tied.filter((r) => r.groupId === group).length, tied: tied.length })),
  );
  const usable = candidates.filter((c) => c.inGroup >= 2 && c.tied > c.inGroup).sort((a, b) => b.tied - a.tied || a.value.localeCompare(b.value));
  if (usable.length === 0) throw new Error('the test data has no instant with partial ties; change its size or seed');
  return usable[0];
}

describe('the tap on every dump order', () => {
  const sandboxes = {} as Record<OrderName, Sandbox>;

  beforeAll(async () => {
    await ensureBuilt();
    for (const order of ORDERS) sandboxes[order] = await startTestSandbox({ trainingRecords: 400, phishingRecords: 400, order });
  });

  afterAll(async () => {
    await Promise.all(Object.values(sandboxes).map((s) => s.close()));
  });

  /** One sync per order with the same settings and state, by order. */
  async function syncEach(extra: JsonObject, state?: StateValue): Promise<Record<OrderName, TapRun>> {
    const runs = await Promise.all(ORDERS.map((order) => syncOk({ config: tapConfig(sandboxes[order], { discovery: 'packaged', ...extra }), state })));
    return Object.fromEntries(ORDERS.map((order, i) => [order, runs[i]])) as Record<OrderName, TapRun>;
  }

  /** The STATE line but the change store's generation, which names each run's own file. */
  const sameState = (run: TapRun): string => stateLine(run).replace(/"generation":"[^"]+"/g, '"generation":"…"');

  function expectSameOutput(runs: Record<OrderName, TapRun>): void {
    const lines = recordLines(runs.generated);
    const state = sameState(runs.generated);
    expect(state).not.toBe('');
    for (const order of ORDERS) {
      expect(recordLines(runs[order]), order).toEqual(lines);
      // Byte for byte: the same records give the same STATE whatever their order.
      expect(sameState(runs[order]), order).toBe(state);
    }
  }

  let filteredState: StateValue;
  let ties: ReturnType<typeof partialTies>;

  it('a full sync gives the same RECORD lines and the same bookmarks on every order', async () => {
    const runs = await syncEach({});
    expectSameOutput(runs);
    for (const stream of STREAM_NAMES) expect(recordsOf(runs.generated.messages, stream)).toHaveLength(400);
    // The phishing maximum is a send wave: many records tie at it.
    expect(lastState(runs.generated.messages).bookmarks!.phishing.boundary_hashes!.length).toBeGreaterThan(1);
  });

  it('a full sync ending on ties at the maximum gives the same records and bookmark on every order', async () => {
    ties = partialTies(sandboxRecords(sandboxes.generated, 'training'));
    const runs = await syncEach({ filters: { training: { completedAt: `<=${ties.value}`, group: ties.group } } });
    expectSameOutput(runs);
    filteredState = lastState(runs.generated.messages);
    const bookmark = filteredState.bookmarks!.training;
    expect(bookmark.replication_key_value).toBe(ties.value);
    expect(bookmark.boundary_hashes).toHaveLength(ties.inGroup);
  });

  it('an incremental run from that bookmark emits the same records on every order: the unsent ties, not the sent ones', async () => {
    // One state for the sandboxes of every order, each a tenant of its own: without the change store, which keeps what each tenant's target holds.
    const runs = await syncEach({ send_changes_only: false }, filteredState);
    expectSameOutput(runs);
    const atOrAfter = sandboxRecords(sandboxes.generated, 'training', { completedAt: `>=${ties.value}` });
    const expected = atOrAfter.filter((r) => !(r.completedAt === ties.value && r.groupId === ties.group));
    expect(expected.filter((r) => r.completedAt === ties.value)).toHaveLength(ties.tied - ties.inGroup);
    // And the open rows, read again on every incremental run.
    const open = sandboxRecords(sandboxes.generated, 'training', { completed: 'false' });
    expect(recordsOf(runs.ascending.messages, 'training').map(canonical).sort()).toEqual([...expected, ...open].map(canonical).sort());
  });
});

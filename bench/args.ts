/**
 * The options of `npm run bench` (bench/run.ts), on their own so that a test
 * can check the commands the docs show without running a bench:
 *
 *   npm run bench -- [--records 1000000] [--rounds 3] [--order-rounds N] [--orders ascending,descending,shuffled,grouped|none]
 *                    [--big 5000000|0] [--slow-seconds 20|0] [--main-only] [--full-pass-only] [--store-only] [--json]
 *
 * --main-only times the main variants on the orders only (no layouts, personal
 * data, BATCH or slow consumer): for the long runs at 1,000,000 records.
 * --full-pass-only times the full pass's trio alone (--rounds of it).
 * --store-only times the change store alone (bench/change-pass.ts): a plain
 * sync, a first run and a change pass in which nothing changed, in turn, with
 * the store in the folder, in a bucket (s3rver) and in the state (at most
 * 100,000 records: a larger store does not fit in the state); and the default
 * first run against the strong pipeline (bench/default-first-run.ts).
 */

/** The dump orders the main variants run on (sandbox --order). */
export const ORDERS = ['ascending', 'descending', 'shuffled', 'grouped'] as const;
export type Order = (typeof ORDERS)[number];

export interface Args {
  records: number;
  /** Rounds of the layout and personal-data pairs. */
  rounds: number;
  /** Rounds of each main variant on each order. */
  orderRounds: number;
  orders: Order[];
  big: number;
  slowSeconds: number;
  /** Skip the default-order runs (layouts, personal data, BATCH, slow consumer). */
  mainOnly: boolean;
  /** Only the full pass's trio: no orders, layouts, pairs, slow consumer or flatness run. */
  fullPassOnly: boolean;
  /** Only the change store's runs (bench/change-pass.ts, bench/default-first-run.ts). */
  storeOnly: boolean;
  json: boolean;
}

function parseOrders(text: string): Order[] {
  if (text === 'none') return [];
  const orders = text.split(',');
  const unknown = orders.filter((o) => !(ORDERS as readonly string[]).includes(o));
  if (unknown.length > 0) throw new Error(`bench: unknown order ${unknown.join(', ')}; use ${ORDERS.join(', ')} or none`);
  return orders as Order[];
}

/** A count or a number of seconds: a bench given `--rounds --big 0` would otherwise run NaN rounds without a word. */
function numberOf(flag: string, text: string | undefined): number {
  const value = Number(text);
  if (text === undefined || text.trim() === '' || !Number.isFinite(value) || value < 0) throw new Error(`bench: ${flag} takes a number of 0 or more, not ${text ?? 'nothing'}`);
  return value;
}

export function parseArgs(argv: readonly string[]): Args {
  const args: Args = { records: 1_000_000, rounds: 3, orderRounds: Number.NaN, orders: [...ORDERS], big: 5_000_000, slowSeconds: 20, mainOnly: false, fullPassOnly: false, storeOnly: false, json: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = (): number => numberOf(flag, argv[++i]);
    if (flag === '--records') args.records = value();
    else if (flag === '--rounds') args.rounds = value();
    else if (flag === '--order-rounds') args.orderRounds = value();
    else if (flag === '--orders') args.orders = parseOrders(argv[++i] ?? '');
    else if (flag === '--big') args.big = value();
    else if (flag === '--slow-seconds') args.slowSeconds = value();
    else if (flag === '--json') args.json = true;
    else if (flag === '--main-only') args.mainOnly = true;
    else if (flag === '--full-pass-only') args.fullPassOnly = true;
    else if (flag === '--store-only') args.storeOnly = true;
    else throw new Error(`bench: unknown option ${flag}`);
  }
  if (Number.isNaN(args.orderRounds)) args.orderRounds = args.rounds;
  return args;
}

import type { Dataset, Snapshot } from './dataset.js';
import { groupedRows, shuffledRows, sortedRows, type OrderName, type RowOrder } from './order.js';

/** The field whose value groups rows in the `grouped` order. */
const GROUP_FIELD = 'userId';

/**
 * One stream's serving order, computed once per data version: an order other
 * than `generated` costs 4 bytes a row (4 MB for a million), held for the
 * newest version only; a response keeps the order of the snapshot it started on.
 */
export class DumpOrder {
  private cached: { readonly version: number; readonly rows: RowOrder } | null = null;

  constructor(
    private readonly dataset: Dataset,
    readonly order: OrderName,
    private readonly seed: number,
  ) {}

  /** Row indexes of `snapshot` in this order; null: index order. */
  rows(snapshot: Snapshot): RowOrder {
    if (this.order === 'generated') return null;
    if (this.cached?.version === snapshot.version) return this.cached.rows;
    const rows = this.compute(snapshot);
    // An older snapshot (a request that started before a change) must not evict the newest order.
    if (this.cached === null || snapshot.version > this.cached.version) this.cached = { version: snapshot.version, rows };
    return rows;
  }

  private compute(snapshot: Snapshot): RowOrder {
    const { dataset } = this;
    const count = snapshot.count;
    switch (this.order) {
      case 'generated':
        return null;
      case 'ascending':
      case 'descending': {
        const key = dataset.model.descriptor.replicationKey;
        const keyAt = (i: number): number | null => {
          const value = dataset.valueAt(snapshot, i, key);
          return typeof value === 'number' ? value : null;
        };
        return sortedRows(count, keyAt, this.order === 'descending');
      }
      case 'shuffled':
        return shuffledRows(count, this.seed);
      case 'grouped':
        return groupedRows(count, (i) => String(dataset.valueAt(snapshot, i, GROUP_FIELD)));
    }
  }
}

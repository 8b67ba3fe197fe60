import { describe, expect, it } from 'vitest';
import { REPORTS } from '../../src/catalog/reports.js';
import { resolveConfig } from '../../src/config/config.js';
import { checkQuery, refusedCheckAdvice } from '../../src/sync/check-query.js';

/**
 * check asks what the first sync's request asks (its configured filters, the
 * date format), with the sync's lower bound moved to a date no record has;
 * a refusal names the settings behind the filters, never a value.
 */

const training = REPORTS.find((r) => r.name === 'training')!;

function config(settings: Record<string, unknown>) {
  return resolveConfig({ base_url: 'http://127.0.0.1:1', access_token: 'check-token', ...settings });
}

describe('checkQuery', () => {
  it('sends the configured filters as the sync does, and the lower bound on the replication key at 9999-12-31 in filter_date_format', () => {
    const query = checkQuery(training, config({ filters: { training: { email: 'alice@example.com', program: 'prog-01' } }, filter_date_format: 'epoch_seconds', start_date: '2024-01-01T00:00:00Z' }));
    expect(query).toEqual([
      ['filter[program]', 'prog-01'],
      ['filter[email]', 'alice@example.com'],
      ['filter[completedAt]', '>=253402214400'],
    ]);
  });

  it('puts the far bound in place of a configured >= filter on the replication key, as the sync puts a later bookmark (no dump to download), and sends a configured < filter as the sync does', () => {
    const key = training.replicationFilter;
    expect(checkQuery(training, config({ filters: { training: { [key]: '<2025-06-01' } } }))).toEqual([[`filter[${key}]`, '<2025-06-01']]);
    expect(checkQuery(training, config({ filters: { training: { [key]: '>=2025-01-01' } }, filter_date_format: 'epoch_seconds' }))).toEqual([[`filter[${key}]`, '>=253402214400']]);
  });
});

describe('refusedCheckAdvice', () => {
  it('names the setting behind the filter the server names, and never its value', () => {
    const settings = config({ filters: { training: { email: 'alice@example.com', program: 'prog-01' } } });
    const advice = refusedCheckAdvice(training, checkQuery(training, settings), settings, 'filter[email]: unknown filter');
    expect(advice).toBe('The service refused filter[email], set by filters.training.email: remove or fix it; the first sync sends the same and would be refused too.');
  });

  it('when the server names none of the filters, names every setting behind them, and the tap\'s own bound; never a value', () => {
    const settings = config({ filters: { training: { email: 'alice@example.com', program: 'prog-01' } } });
    const advice = refusedCheckAdvice(training, checkQuery(training, settings), settings, 'bad request');
    expect(advice).toMatch(/^Check filters\.training\.program, filters\.training\.email: the first sync sends the same and would be refused too\. filter\[completedAt\] is the tap's own lower bound/);
    expect(advice).not.toContain('alice');
  });

  it('with only the tap\'s own bound, says that every sync sends it and points at filter_date_format', () => {
    const settings = config({ filter_date_format: 'date' });
    expect(refusedCheckAdvice(training, checkQuery(training, settings), settings)).toBe(
      `The first sync sends the same and would be refused too. filter[${training.replicationFilter}] is the tap's own lower bound, which every sync sends (start_date's, then the bookmark's) as filter_date_format date writes it; if the service takes dates in another form, set filter_date_format to it.`,
    );
  });
});

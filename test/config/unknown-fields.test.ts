import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/config.js';
import { configErrorOf } from '../helpers/errors.js';

/**
 * A field the config schema does not know: the tap (the Singer face) refuses
 * it, naming it; the Airbyte face, whose spec is open because a config saved
 * by another version of the source must stay usable, leaves it out and warns
 * once per field, by name and with the name it most likely meant, never with
 * its value.
 */

const BASE = { base_url: 'https://api.example.com', access_token: 'tok-abc' };

function lenient(settings: Record<string, unknown>): { config: ReturnType<typeof resolveConfig>; warnings: string[] } {
  const warnings: string[] = [];
  const config = resolveConfig({ ...BASE, ...settings }, undefined, (warning) => warnings.push(warning));
  return { config, warnings };
}

describe('unknown config fields on the Airbyte face', () => {
  it('a top-level one is left out of the config, with a warning naming it and the field it likely meant', () => {
    const { config, warnings } = lenient({ strat_date: '2025-01-01' });
    expect(config).not.toHaveProperty('strat_date');
    expect(config.start_date).toBeUndefined();
    expect(warnings).toEqual([
      "Unknown config field strat_date (did you mean start_date?) is ignored: this version of the source does not know it. Correct its name, or remove it from the source's configuration (source-report-dump spec lists every field).",
    ]);
  });

  it('nested ones (a filter of a stream, a stream under filters) go too, each with its own warning; the known ones beside them stay', () => {
    const { config, warnings } = lenient({ filters: { training: { programm: 'p-1', module: 'm-1' }, trainnig: { program: 'p-2' } } });
    expect(config.filters).toEqual({ training: { module: 'm-1' } });
    expect(warnings).toHaveLength(2);
    expect(warnings.find((w) => w.includes('filters.training.programm'))).toMatch(/^Unknown config field filters\.training\.programm \(did you mean program\? filters\.training takes program, module, .*\) is ignored: /);
    expect(warnings.find((w) => w.includes('filters.trainnig'))).toMatch(/^Unknown config field filters\.trainnig \(did you mean training\? filters takes training, phishing\) is ignored: /);
  });

  it('a misspelt member of a personal_data rule goes too (the rule then holds for every stream, which protects more, and the line says so by name): in a list, not only in objects', () => {
    const { config, warnings } = lenient({ personal_data: [{ field: 'email', policy: 'hash', steam: 'training' }] });
    expect(config.personal_data).toEqual([{ field: 'email', policy: 'hash' }]);
    expect(warnings).toEqual([expect.stringMatching(/^Unknown config field personal_data\[0\]\.steam \(did you mean stream\? personal_data\[0\] takes field, policy, stream\) is ignored: /)]);
  });

  it('on the Singer face a misspelt member of a personal_data rule is an error: a rule meant for one stream must not silently hold for all', () => {
    const error = configErrorOf(() => resolveConfig({ ...BASE, personal_data: [{ field: 'email', policy: 'hash', steam: 'training' }] }));
    expect(error.message).toMatch(/^Invalid config: unknown setting personal_data\[0\]\.steam \(did you mean stream\?/);
  });

  it('a field with no near name is named alone', () => {
    expect(lenient({ frobnicate: 1 }).warnings).toEqual([expect.stringMatching(/^Unknown config field frobnicate is ignored: this version/)]);
  });

  it('never shows the value of an unknown field: it may be a secret', () => {
    const { warnings } = lenient({ acess_token: 'tok-SECRET-4711', personal_data_key: 'k'.repeat(40) });
    expect(warnings.join('\n')).toContain('acess_token (did you mean access_token?)');
    expect(warnings.join('\n')).not.toMatch(/SECRET|kkkk/);
  });

  it('any other invalid field is still an error, naming only that field', () => {
    const warnings: string[] = [];
    const error = configErrorOf(() => resolveConfig({ ...BASE, strat_date: '2025-01-01', format: 'xml' }, undefined, (warning) => warnings.push(warning)));
    expect(error.airbyteMessage).toMatch(/^Invalid config: config field format must be one of jsonl, csv\. /);
    expect(error.airbyteMessage).not.toContain('strat_date');
    expect(warnings).toEqual([expect.stringContaining('strat_date')]);
  });

  it('without a warning to give (the Singer face), an unknown field is the error it was', () => {
    const error = configErrorOf(() => resolveConfig({ ...BASE, strat_date: '2025-01-01', filters: { training: { programm: 'p-1' } } }));
    expect(error.message).toMatch(/^Invalid config: unknown setting strat_date \(did you mean start_date\?\); unknown setting filters\.training\.programm \(did you mean program\?/);
  });
});

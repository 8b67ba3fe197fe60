import { describe, expect, it } from 'vitest';
import { withoutNodeWarning } from '../helpers/node-warning.js';
import { strayVariableWarnings } from '../../src/config/stray-variables.js';
import { editDistance } from '../../src/config/nearest-name.js';
import { loadRunConfig } from '../../src/config/load.js';
import { Session } from '../../src/observe/session.js';
import { configSchema } from '../../src/config/schema.js';

const SETTINGS = Object.keys(configSchema().properties ?? {});

describe('environment variables that look like settings but are none', () => {
  it('a misspelt setting is named, with the nearest real one', () => {
    expect(strayVariableWarnings({ TAP_REPORT_DUMP_STRAT_DATE: '2025-01-01' }, SETTINGS)).toEqual([
      'Environment variable TAP_REPORT_DUMP_STRAT_DATE is not a setting and is ignored; did you mean TAP_REPORT_DUMP_START_DATE (start_date)? tap-report-dump --about lists every setting; each is read from TAP_REPORT_DUMP_<SETTING> in upper case.',
    ]);
  });

  it('one far from every setting is named without a guess', () => {
    const [warning] = strayVariableWarnings({ TAP_REPORT_DUMP_COLOUR: 'blue' }, SETTINGS);
    expect(warning).toMatch(/^Environment variable TAP_REPORT_DUMP_COLOUR is not a setting and is ignored\. /);
    expect(warning).not.toMatch(/did you mean/);
  });

  it('a setting in lower case is named with its upper-case spelling', () => {
    expect(strayVariableWarnings({ tap_report_dump_start_date: 'x' }, SETTINGS)[0]).toMatch(/tap_report_dump_start_date is not a setting and is ignored \(names are upper case: TAP_REPORT_DUMP_START_DATE, for start_date\)/);
  });

  it('real settings, TAP_REPORT_DUMP_DEBUG, Meltano extras (double underscore) and other variables pass silently', () => {
    const env = { TAP_REPORT_DUMP_START_DATE: 'x', TAP_REPORT_DUMP_ACCESS_TOKEN: 'x', TAP_REPORT_DUMP_DEBUG: '1', TAP_REPORT_DUMP__SELECT: '[]', HOME: '/root', TAP_OTHER_START: 'x' };
    expect(strayVariableWarnings(env, SETTINGS)).toEqual([]);
  });

  it('never quotes a value', () => {
    const [warning] = strayVariableWarnings({ TAP_REPORT_DUMP_ACCES_TOKEN: 'tok-secret-value-123' }, SETTINGS);
    expect(warning).toMatch(/did you mean TAP_REPORT_DUMP_ACCESS_TOKEN \(access_token\)/);
    expect(warning).not.toMatch(/tok-secret/);
  });

  it('loading the config warns once per stray variable, in the run log format', () => {
    const lines: string[] = [];
    const session = new Session();
    const logger = session.logger.bind(session);
    session.logger = (options = {}) => logger({ ...options, write: (line) => lines.push(line) });
    const env = { TAP_REPORT_DUMP_BASE_URL: 'https://api.example.com', TAP_REPORT_DUMP_ACCESS_TOKEN: 'tok-abcdef', TAP_REPORT_DUMP_LOG_FORMAT: 'json', TAP_REPORT_DUMP_STRAT_DATE: '2025-01-01' };
    loadRunConfig([], session, env);
    // On a Node.js line the tap does not support (the suite runs on Node 20 too), that warning comes first: it is tested on its own.
    expect(withoutNodeWarning(lines.join('\n')).split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { level: string; message: string }).map((l) => [l.level, l.message.split(';')[0]])).toEqual([['warn', 'Environment variable TAP_REPORT_DUMP_STRAT_DATE is not a setting and is ignored']]);
  });

  it('edit distance counts a swap of neighbours as one edit', () => {
    expect(editDistance('STRAT_DATE', 'START_DATE')).toBe(1);
    expect(editDistance('ABC', 'ABC')).toBe(0);
    expect(editDistance('', 'AB')).toBe(2);
    expect(editDistance('KITTEN', 'SITTING')).toBe(3);
  });
});

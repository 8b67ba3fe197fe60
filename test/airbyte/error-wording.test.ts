import { describe, expect, it } from 'vitest';
import { airbyteErrorText } from '../../src/airbyte/commands.js';
import { applyPolicies } from '../../src/catalog/personal-data.js';
import { discoverStreams } from '../../src/catalog/discovery.js';
import { loadSchema } from '../../src/catalog/schemas.js';
import { resolveConfig } from '../../src/config/config.js';
import { runtimeError } from '../../src/errors.js';
import { statusError } from '../../src/http/responses.js';
import { configErrorOf, tapErrorOf } from '../helpers/errors.js';

/**
 * The Airbyte face names the source's config fields where the tap's own
 * messages name its config files and TAP_REPORT_DUMP_ variables, which an
 * Airbyte user never sets; the tap's messages stay as they are.
 */

const [training] = discoverStreams({});
const POLICY_TARGET = { name: 'training', schema: loadSchema('training.json'), keyProperties: training.keyProperties, replicationKey: 'completedAt' };

describe('airbyteErrorText', () => {
  it('a config without access_token: the missing config field and where to set it, not the environment variable', () => {
    const error = configErrorOf(() => resolveConfig({ base_url: 'https://api.example.com' }));
    expect(error.message).toContain('TAP_REPORT_DUMP_ACCESS_TOKEN');
    expect(airbyteErrorText(error)).toBe("Invalid config: missing required config field access_token. Fix it in the source's configuration (source-report-dump spec lists every field).");
  });

  it('an unknown or invalid field is named as a config field', () => {
    const unknown = configErrorOf(() => resolveConfig({ base_url: 'https://api.example.com', access_token: 't', strat_date: '2024-01-01' }));
    expect(airbyteErrorText(unknown)).toMatch(/^Invalid config: unknown config field strat_date \(did you mean start_date\?\)\. Fix it in the source's configuration/);
    const invalid = configErrorOf(() => resolveConfig({ base_url: 'https://api.example.com', access_token: 't', format: 'xml' }));
    expect(airbyteErrorText(invalid)).toMatch(/^Invalid config: config field format must be one of jsonl, csv\./);
    expect(airbyteErrorText(invalid)).not.toMatch(/TAP_REPORT_DUMP_|tap-report-dump|--config/);
  });

  it('a setting the tap checks itself (a token with a trailing newline, a time zone it does not know) is a config field too', () => {
    const token = configErrorOf(() => resolveConfig({ base_url: 'https://api.example.com', access_token: 'abc-token\n' }));
    expect(token.message).toMatch(/^Setting access_token contains whitespace/);
    expect(airbyteErrorText(token)).toMatch(/^Config field access_token contains whitespace or a control character/);
    const zone = configErrorOf(() => resolveConfig({ base_url: 'https://api.example.com', access_token: 't', source_timezone: 'Mars/Olympus' }));
    expect(airbyteErrorText(zone)).toMatch(/^Config field source_timezone "Mars\/Olympus" is not a time zone/);
    expect(airbyteErrorText(zone)).not.toMatch(/\b[Ss]etting\b/);
  });

  it('a pseudonymising policy without pseudonymisation_key names the config field, not TAP_REPORT_DUMP_PSEUDONYMISATION_KEY', () => {
    const error = configErrorOf(() => applyPolicies(POLICY_TARGET, { personal_data: [{ field: 'email', policy: 'hash', stream: 'training' }] }));
    expect(error.message).toContain('TAP_REPORT_DUMP_PSEUDONYMISATION_KEY');
    expect(airbyteErrorText(error)).toBe(
      "Config field personal_data pseudonymises fields of the training stream, but the config field pseudonymisation_key is not set; set it (at least 32 characters) in the source's configuration.",
    );
  });

  it('HTTP 401 points at the access_token field of the source', () => {
    const error = statusError('training', 'reports:training', 401, '', new URL('https://api.example.com/public/v1/dumps/training.jsonl'), undefined, (text) => text);
    expect(error.message).toContain('TAP_REPORT_DUMP_ACCESS_TOKEN');
    expect(airbyteErrorText(error)).toBe("training dump: HTTP 401 Unauthorized: the access token was rejected. Check the access_token field of the source's configuration; it may be wrong or expired.");
  });

  it('any other failure reads as the tap words it, on one line', () => {
    const forbidden = statusError('phishing', 'reports:phishing', 403, '', new URL('https://api.example.com/x'), undefined, (text) => text);
    expect(airbyteErrorText(forbidden)).toBe(forbidden.message);
    expect(airbyteErrorText(tapErrorOf(() => { throw runtimeError('broke\nhere'); }))).toBe('broke here');
    expect(airbyteErrorText(new Error('plain'))).toBe('plain');
  });
});

import { configError } from '../errors.js';
import { readJsonFile } from './json-file.js';
import { packageVersion, type JsonSchema } from '../catalog/schemas.js';
import { REPORTS, type StreamDescriptor } from '../catalog/reports.js';
import { configSchema } from './schema.js';
import { configValidator } from './validator.js';
import { describeConfigErrors, pointerSteps } from './config-errors.js';
import type { ErrorObject } from 'ajv';
import { isTimeZone } from '../time-zone.js';
import type { PersonalDataRule } from '../catalog/personal-data.js';
import { checkRulesDistinct, rulesFromObjectForm } from './personal-data-rules.js';
import { batchSettings, type BatchConfig } from './batch.js';
import { fieldRecord } from '../catalog/field-keys.js';

export type FilterValues = Record<string, string | boolean>;

/**
 * How a date is written in a filter[...] parameter: RFC 3339 UTC; the day
 * (UTC) that contains it; or Unix time in seconds (rounded down) or
 * milliseconds. The day and the seconds only ever widen a lower bound: the
 * tap leaves out the records before the exact bound itself (http/query.ts).
 */
export type FilterDateFormat = 'rfc3339' | 'date' | 'epoch_seconds' | 'epoch_milliseconds';

export interface Config {
  base_url: string;
  access_token: string;
  start_date?: string;
  format: 'jsonl' | 'csv';
  compression: 'gzip' | 'none';
  discovery: 'live' | 'packaged';
  discovery_sample_records: number;
  field_names: 'service' | 'snake_case';
  /** Per stream name. */
  filters: Record<string, FilterValues | undefined>;
  key_properties: Record<string, string[] | undefined>;
  replication_key: Record<string, string | undefined>;
  lookback_window: number;
  max_future_skew: number;
  refresh_open_rows: boolean;
  /** Per stream name; filled with each report's default. */
  event_window_days: Record<string, number | undefined>;
  send_changes_only: boolean;
  store_directory?: string;
  /** Kibibytes a stream's change store may take in the state. */
  state_store_max_kb: number;
  /** s3://bucket/prefix or azure://container/prefix. */
  store_url?: string;
  change_pass_interval_days: number;
  /** `HH:MM-HH:MM` in source_timezone. */
  pass_window?: string;
  full_pass_interval_days: number;
  emit_activate_version_messages: boolean;
  full_pass_min_ratio: number;
  spool_directory?: string;
  spool_max_mb: number;
  request_timeout: number;
  dump_timeout?: number;
  min_throughput: number;
  max_retries: number;
  retry_max_elapsed: number;
  connect_retry_seconds: number;
  backoff_base: number;
  min_request_interval: number;
  user_agent: string;
  on_invalid_record: 'fail' | 'skip';
  max_line_bytes: number;
  require_final_line_break: boolean;
  source_timezone: string;
  csv_delimiter?: ',' | ';' | '\t' | '|';
  filter_date_format: FilterDateFormat;
  schema_drift: 'warn' | 'fail';
  /** Rules, each for a field of one stream or (without `stream`) of every stream; the object form is read as rules. */
  personal_data: PersonalDataRule[];
  pseudonymisation_key?: string;
  batch_config?: BatchConfig;
  allow_insecure_http: boolean;
  log_level: 'debug' | 'info' | 'warn' | 'error';
  log_format: 'text' | 'json';
}

export const ENV_PREFIX = 'TAP_REPORT_DUMP_';

/**
 * `--config ENV` names no file: settings come from the environment, as with
 * the Meltano SDK's taps (which read TAP_* variables only when given it; this
 * tap always reads them, so the word only stands in for a file). A file
 * called ENV is still read as `./ENV`.
 */
export const ENV_CONFIG = 'ENV';

type RawConfig = Record<string, unknown>;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Later wins; nested objects (filters, key_properties) merge key by key. */
export function mergeConfigs(...configs: RawConfig[]): RawConfig {
  // Settings such as personal_data are keyed by field names, which may be `__proto__` or `constructor`.
  const out = fieldRecord<unknown>();
  for (const config of configs) {
    for (const [key, value] of Object.entries(config)) {
      const previous = out[key];
      out[key] = isPlainObject(previous) && isPlainObject(value) ? mergeConfigs(previous, value) : value;
    }
  }
  return out;
}

export function readConfigFile(path: string): RawConfig {
  const parsed = readJsonFile(path, 'config file', { unreadable: 'Check the --config path.', invalid: "Fix the file's syntax." });
  if (!isPlainObject(parsed)) throw configError(`Config file ${path} ${whatItHolds(parsed)}, not an object of settings. Write it as {"base_url": "…", "access_token": "…"}.`);
  return parsed;
}

/** What a config file that is no object holds, for its error (readJsonFile reads an empty file as undefined). */
function whatItHolds(parsed: unknown): string {
  if (parsed === undefined) return 'is empty';
  if (Array.isArray(parsed)) return 'holds an array';
  return parsed === null ? 'holds null' : `holds a ${typeof parsed}`;
}

/** Settings from TAP_REPORT_DUMP_<SETTING> variables, typed by the config schema. */
export function configFromEnv(env: NodeJS.ProcessEnv, reports: readonly StreamDescriptor[] = REPORTS): RawConfig {
  const properties = configSchema(reports).properties ?? {};
  const out: RawConfig = {};
  for (const [name, schema] of Object.entries(properties)) {
    const raw = env[`${ENV_PREFIX}${name.toUpperCase()}`];
    if (raw === undefined || raw === '') continue;
    const variable = `${ENV_PREFIX}${name.toUpperCase()}`;
    switch (schema.type) {
      case 'integer':
      case 'number': {
        const n = Number(raw);
        if (raw.trim() === '' || !Number.isFinite(n)) throw configError(`Environment variable ${variable} is ${JSON.stringify(raw.slice(0, 40))}, not a number. Set it to a number, or unset it.`);
        out[name] = n;
        break;
      }
      case 'boolean':
        if (!/^(true|false|1|0)$/i.test(raw)) throw configError(`Environment variable ${variable} is neither true nor false. Set it to true, false, 1 or 0, or unset it.`);
        out[name] = /^(true|1)$/i.test(raw);
        break;
      case 'object':
      case 'array':
        try {
          out[name] = JSON.parse(raw);
        } catch {
          throw configError(`Environment variable ${variable} is not valid JSON. Set it to a JSON ${schema.type}, e.g. ${schema.type === 'array' ? '["a"]' : '{"training": {}}'}, or unset it.`);
        }
        break;
      default:
        out[name] = raw;
    }
  }
  return out;
}

/**
 * What becomes of a field the config schema does not know: without
 * `onUnknown` it is refused with the other errors (the tap's config, a typo
 * must not pass unnoticed); with it, it is left out of the config and
 * `onUnknown` gets a warning naming it (the Airbyte source's, whose open spec
 * lets a config saved by another version through: a field one version knows
 * and the next does not must not stop the connection). One compiled
 * validator serves both: its additionalProperties errors are the unknown
 * fields.
 */
export type UnknownFieldWarning = (warning: string) => void;

function validate(raw: RawConfig, reports: readonly StreamDescriptor[], onUnknown: UnknownFieldWarning | undefined): void {
  const validator = configValidator(reports);
  if (validator(raw)) return;
  const schema = configSchema(reports);
  let errors = validator.errors ?? [];
  if (onUnknown && errors.some(isUnknownField)) {
    ignoreUnknownFields(raw, errors.filter(isUnknownField), schema, onUnknown);
    if (validator(raw)) return;
    errors = validator.errors ?? [];
  }
  const described = (noun: string): string => describeConfigErrors(errors, schema, noun).join('; ');
  const messages = described('setting');
  const hint = messages.includes('access_token') ? ` (set it in a --config file or ${ENV_PREFIX}ACCESS_TOKEN)` : '';
  throw configError(
    `Invalid config: ${messages}${hint}. Fix the config file or TAP_REPORT_DUMP_* variable that sets it (tap-report-dump --about lists every setting).`,
    `Invalid config: ${described('config field')}. Fix it in the source's configuration (source-report-dump spec lists every field).`,
  );
}

const isUnknownField = (error: ErrorObject): boolean => error.keyword === 'additionalProperties';

/** Warns of each unknown field, by name only (its value may be a secret), and removes it from the object it is in. */
function ignoreUnknownFields(raw: RawConfig, unknown: readonly ErrorObject[], schema: JsonSchema, onUnknown: UnknownFieldWarning): void {
  for (const message of describeConfigErrors(unknown, schema, 'config field')) {
    onUnknown(`${message.charAt(0).toUpperCase()}${message.slice(1)} is ignored: this version of the source does not know it. Correct its name, or remove it from the source's configuration (source-report-dump spec lists every field).`);
  }
  for (const error of unknown) {
    const parent = pointerSteps(error.instancePath).reduce<unknown>((node, step) => (isPlainObject(node) || Array.isArray(node) ? (node as Record<string, unknown>)[step] : undefined), raw);
    if (isPlainObject(parent)) delete parent[(error.params as { additionalProperty: string }).additionalProperty];
  }
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || hostname === '::1' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/**
 * Loads config files in order (`ENV` stands for none), then environment
 * variables (which win), fills defaults and validates everything before any request is made.
 */
export function loadConfig(paths: readonly string[], env: NodeJS.ProcessEnv = process.env, reports: readonly StreamDescriptor[] = REPORTS, onUnknown?: UnknownFieldWarning): Config {
  return resolveConfig(readRawConfig(paths, env, reports), reports, onUnknown);
}

/** The settings of the config files in order (`ENV` stands for none) and of the environment (which wins), as written. */
export function readRawConfig(paths: readonly string[], env: NodeJS.ProcessEnv = process.env, reports: readonly StreamDescriptor[] = REPORTS): RawConfig {
  const files = paths.filter((path) => path !== ENV_CONFIG);
  return mergeConfigs(...files.map(readConfigFile), configFromEnv(env, reports));
}

/** Whether personal_data is written in the deprecated object form (read as the same rules). */
export function hasObjectFormPersonalData(raw: RawConfig): boolean {
  return isPlainObject(raw.personal_data);
}

/** `onUnknown`: see UnknownFieldWarning. */
export function resolveConfig(raw: RawConfig, reports: readonly StreamDescriptor[] = REPORTS, onUnknown?: UnknownFieldWarning): Config {
  const copy = structuredClone(raw);
  if (isPlainObject(copy.personal_data)) copy.personal_data = rulesFromObjectForm(copy.personal_data, reports.map((d) => d.name));
  validate(copy, reports, onUnknown);
  const config = copy as unknown as Config;
  checkRulesDistinct(config.personal_data);
  checkHeaderValues(config);
  const window = config.pass_window?.split('-');
  if (window !== undefined && window[0] === window[1]) throw configError(`Setting pass_window ${config.pass_window} holds no time: it starts where it ends. Write the off-peak hours like 01:00-05:00 (it may pass midnight: 22:00-04:00).`);
  if (!isTimeZone(config.source_timezone)) throw configError(`Setting source_timezone ${JSON.stringify(config.source_timezone.slice(0, 60))} is not a time zone this Node.js knows; use an IANA name such as Europe/Berlin, or UTC.`);
  config.base_url = config.base_url.replace(/\/+$/, '');
  checkBaseUrl(parseBaseUrl(config.base_url), config.allow_insecure_http);
  batchSettings(config.batch_config);
  config.user_agent ??= `tap-report-dump/${packageVersion()}`;
  return config;
}

/** Characters an HTTP header value may carry (Node refuses the others when sending). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** The token and the User-Agent travel in headers: what cannot be sent is a config error now, not a failure at the first request. */
function checkHeaderValues(config: Config): void {
  if (/[\s\u0000-\u001f\u007f]/.test(config.access_token)) {
    throw configError('Setting access_token contains whitespace or a control character (often a trailing newline from a file or a secret store); remove it.');
  }
  if (!HEADER_VALUE.test(config.access_token)) throw configError('Setting access_token contains a character that cannot be sent in an HTTP header (outside Latin-1); check the token.');
  if (config.user_agent !== undefined && !HEADER_VALUE.test(config.user_agent)) {
    throw configError('Setting user_agent contains a line break, a control character or a character outside Latin-1, which cannot be sent in an HTTP header; remove it.');
  }
}

/** The base URL, or a config error that says what is wrong with it without quoting it (it may hold a secret). */
function parseBaseUrl(text: string): URL {
  try {
    return new URL(text);
  } catch {
    const port = /^[a-z]+:\/\/[^/?#]*:([^/?#]*)/i.exec(text)?.[1];
    const why = port !== undefined && !(/^\d+$/.test(port) && Number(port) <= 65535) ? 'its port must be a number from 0 to 65535' : 'check the host name';
    throw configError(`Setting base_url is not a valid URL: ${why}. Write it like https://api.example.com.`);
  }
}

function checkBaseUrl(url: URL, allowInsecureHttp: boolean): void {
  if (url.protocol === 'http:' && !isLoopback(url.hostname) && !allowInsecureHttp) {
    throw configError(
      `Setting base_url uses plain http:// for ${url.hostname}: the access token would travel unencrypted. Use https://, or set allow_insecure_http to true.`,
    );
  }
  if (url.username || url.password) throw configError('Setting base_url contains credentials (user:password@); remove them and put the token in access_token.');
  if (url.search || url.hash) throw configError('Setting base_url contains a query string or fragment, which the tap cannot keep on its requests; remove it (filters go in the filters setting).');
}

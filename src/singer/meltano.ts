import type { JsonSchema } from '../catalog/schemas.js';
import { about, type About } from './about.js';

/**
 * The tap as a Meltano custom extractor (the README's `meltano.yml` block,
 * `--about --format meltano`), derived from the config schema so that each
 * setting's kind follows its type. Kinds as Meltano 3.9+ defines them: a
 * number with a fraction is `decimal` (`integer` would make Meltano refuse
 * 2.5 given on its command line), and a secret is a `string` marked
 * `sensitive: true` (Meltano's `password` kind is deprecated in its favour).
 */

export type MeltanoKind = 'string' | 'integer' | 'decimal' | 'boolean' | 'date_iso8601' | 'options' | 'object' | 'array';

export interface MeltanoOption {
  label: string;
  value: string;
}

export interface MeltanoSetting {
  name: string;
  kind: MeltanoKind;
  sensitive?: true;
  options?: MeltanoOption[];
}

/** Names for values that are punctuation, which a settings UI would show as a blank-looking choice. */
const OPTION_LABELS: Readonly<Record<string, string>> = { ',': 'comma', ';': 'semicolon', '\t': 'tab', '|': 'pipe' };

function kindOf(schema: JsonSchema): MeltanoKind {
  if (Array.isArray(schema.enum)) return 'options';
  switch (schema.type) {
    case 'integer':
      return 'integer';
    case 'number':
      return 'decimal';
    case 'boolean':
      return 'boolean';
    case 'object':
      return 'object';
    case 'array':
      return 'array';
    default:
      return typeof schema.format === 'string' && schema.format.startsWith('date') ? 'date_iso8601' : 'string';
  }
}

export function meltanoSetting(name: string, schema: JsonSchema): MeltanoSetting {
  const setting: MeltanoSetting = { name, kind: kindOf(schema) };
  if (schema.secret === true) setting.sensitive = true;
  if (Array.isArray(schema.enum)) setting.options = schema.enum.map((value) => ({ label: OPTION_LABELS[String(value)] ?? String(value), value: String(value) }));
  return setting;
}

export function meltanoSettings(info: About = about()): MeltanoSetting[] {
  return Object.entries(info.settings.properties ?? {}).map(([name, schema]) => meltanoSetting(name, schema));
}

/** A YAML scalar: bare where YAML reads it back as the same string, else double-quoted (JSON's escapes are YAML's). */
function scalar(value: string): string {
  return /^[A-Za-z_][\w-]*$/.test(value) && !/^(true|false|yes|no|on|off|null)$/i.test(value) ? value : JSON.stringify(value);
}

function settingLine(setting: MeltanoSetting): string {
  const parts = [`name: ${setting.name}`, `kind: ${setting.kind}`];
  if (setting.sensitive) parts.push('sensitive: true');
  if (setting.options) parts.push(`options: [${setting.options.map((o) => `{ label: ${scalar(o.label)}, value: ${scalar(o.value)} }`).join(', ')}]`);
  return `        - { ${parts.join(', ')} }`;
}

/** The `plugins:` block of a meltano.yml that adds the tap as a custom extractor. */
export function meltanoDefinition(info: About = about()): string {
  return [
    'plugins:',
    '  extractors:',
    `    - name: ${info.name}`,
    `      namespace: ${info.name.replace(/-/g, '_')}`,
    '      pip_url: ""',
    `      executable: ${info.name}`,
    `      capabilities: [${info.capabilities.join(', ')}]`,
    '      settings_group_validation:',
    `        - [${(info.settings.required ?? []).join(', ')}]`,
    '      settings:',
    ...meltanoSettings(info).map(settingLine),
    '',
  ].join('\n');
}

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { parse as parseYaml } from 'yaml';
import { ROOT } from './build.js';

/** Validators of the Airbyte protocol's published JSON Schema (vendored in test/fixtures): a message a source writes, and a configured catalog. */

const PROTOCOL = join(ROOT, 'test', 'fixtures', 'airbyte_protocol.yaml');

export function airbyteProtocolValidators(): { message: ValidateFunction; configuredCatalog: ValidateFunction } {
  const protocol = parseYaml(readFileSync(PROTOCOL, 'utf8')) as { definitions: Record<string, unknown> };
  const ajv = new Ajv({ strict: false, allErrors: true });
  (addFormatsModule as unknown as (a: Ajv) => Ajv)(ajv);
  ajv.addSchema({ ...protocol, $id: 'airbyte_protocol' }, 'airbyte_protocol');
  return {
    message: ajv.compile({ $ref: 'airbyte_protocol#/definitions/AirbyteMessage' }),
    configuredCatalog: ajv.compile({ $ref: 'airbyte_protocol#/definitions/ConfiguredAirbyteCatalog' }),
  };
}

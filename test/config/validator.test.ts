import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT, ensureBuilt } from '../helpers/build.js';
import type { precompiledValidator as PrecompiledValidator } from '../../src/config/validator.js';
import type { configSchema as ConfigSchema } from '../../src/config/schema.js';

/** The built package, as the installed tap runs it: the build step writes the precompiled validator into dist/. */
async function built(): Promise<{ precompiledValidator: typeof PrecompiledValidator; configSchema: typeof ConfigSchema }> {
  const module = (path: string) => import(pathToFileURL(join(ROOT, 'dist', 'src', 'config', path)).href);
  return { ...(await module('validator.js')), ...(await module('schema.js')) };
}

beforeAll(ensureBuilt, 180_000);

describe('the built tap', () => {
  it('has a precompiled validator for the shipped reports, which it uses', async () => {
    const { precompiledValidator, configSchema } = await built();
    const validate = precompiledValidator(JSON.stringify(configSchema()));
    expect(validate).toBeTypeOf('function');
    expect(validate!({ base_url: 'https://api.example.com', access_token: 't' })).toBe(true);
    expect(validate!({ base_url: 'https://api.example.com' })).toBe(false);
  });

  it('does not use it for a schema it was not compiled from (another report list, or schemas/config.json edited since the build)', async () => {
    const { precompiledValidator, configSchema } = await built();
    const edited = configSchema();
    edited.properties!.lookback_window = { type: 'integer', minimum: 60 };
    expect(precompiledValidator(JSON.stringify(edited))).toBeUndefined();
  });
});

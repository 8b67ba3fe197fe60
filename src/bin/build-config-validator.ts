import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { configValidatorModule } from '../config/standalone.js';
import { PRECOMPILED_VALIDATOR } from '../config/validator.js';

// A build step (npm run build), not a command users run: writes the config validator compiled ahead of time next to the module that loads it.
writeFileSync(fileURLToPath(PRECOMPILED_VALIDATOR), configValidatorModule());

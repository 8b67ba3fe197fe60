#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=1
import { hideBin } from 'yargs/helpers';
import { airbyteCli } from './airbyte-cli.js';
import { SOURCE_NAME } from './airbyte-usage.js';

/** `source-report-dump`: the connector as an Airbyte source (same as `tap-report-dump airbyte`). */
await airbyteCli(SOURCE_NAME, hideBin(process.argv));

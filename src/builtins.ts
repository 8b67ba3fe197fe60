/**
 * Node builtins taken as CommonJS modules, for the modules on the start-up
 * path: an ESM import of a builtin reads every export, getters included, and
 * some getters load whole subsystems at every start: node:fs's `promises`
 * loads node:fs/promises and readline (~2 ms), node:util's load its diff and
 * worker modules (~5 ms). Taken this way, only what is used is loaded.
 * This module is on every command's path, `--version`'s too: builtins that
 * cost more to load (node:http in http/transport.ts, node:zlib for a gzip
 * body) are taken where they are used.
 */
export const fs = process.getBuiltinModule('node:fs');
export const { parseArgs } = process.getBuiltinModule('node:util');

// A Singer target for the schedule recipe's tests (scripts/run-daily.sh), run as a child
// process, so plain JavaScript. It reads Singer messages on stdin and, as a real target
// prints each state it committed, prints each STATE's value as a line on stdout.
//   node fake-target.mjs ok              reads everything, prints the states, exits 0
//   node fake-target.mjs fail            reads a few lines, then exits 1 (a target that dies mid-load)
//   node fake-target.mjs silent          reads everything, prints nothing, exits 0
// Environment: FAKE_TARGET_SEEN, a file where it writes how many messages of each type it
// read (JSON); FAKE_TARGET_HOLD, a file it waits for before it ends (a run still going).
import { existsSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';

const mode = process.argv[2];
if (!['ok', 'fail', 'silent'].includes(mode)) {
  process.stderr.write(`fake-target: unknown mode ${mode}; use ok, fail or silent\n`);
  process.exit(2);
}

const seen = {};
let lines = 0;
for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === '') continue;
  const message = JSON.parse(line);
  seen[message.type] = (seen[message.type] ?? 0) + 1;
  if (mode === 'fail' && ++lines === 3) {
    process.stderr.write('fake-target: cannot load into the warehouse, stopping\n');
    process.exit(1);
  }
  if (mode === 'ok' && message.type === 'STATE') process.stdout.write(`${JSON.stringify(message.value)}\n`);
}
if (process.env.FAKE_TARGET_SEEN) writeFileSync(process.env.FAKE_TARGET_SEEN, JSON.stringify(seen));
if (process.env.FAKE_TARGET_HOLD) while (!existsSync(process.env.FAKE_TARGET_HOLD)) await sleep(20);
process.stderr.write(`fake-target: loaded ${Object.entries(seen).map(([type, n]) => `${n} ${type}`).join(', ')}\n`);

// CI helper: reads protocol messages (Singer or Airbyte, one JSON object a line) on stdin and checks
// how many of each kind there are. Arguments: TYPE[:stream]=N or TYPE[:stream]>=N, e.g.
//   node .ci/expect-messages.mjs RECORD:training=4000 ACTIVATE_VERSION:training=1 STATE>=1
// Exits 1 naming the first expectation that does not hold (and what was counted).
import { text } from 'node:stream/consumers';

const counts = new Map();
const count = (key) => counts.set(key, (counts.get(key) ?? 0) + 1);
for (const line of (await text(process.stdin)).split('\n')) {
  if (line.trim() === '') continue;
  const message = JSON.parse(line);
  const stream = message.stream ?? message.record?.stream ?? message.state?.stream?.stream_descriptor?.name;
  count(message.type);
  if (stream !== undefined) count(`${message.type}:${stream}`);
}
for (const expectation of process.argv.slice(2)) {
  const [, key, op, n] = /^([A-Z_]+(?::\w+)?)(>=|=)(\d+)$/.exec(expectation) ?? [];
  if (key === undefined) throw new Error(`cannot read the expectation ${expectation}`);
  const seen = counts.get(key) ?? 0;
  if (op === '=' ? seen !== Number(n) : seen < Number(n)) {
    console.error(`expected ${expectation}, counted ${seen}; all counts: ${JSON.stringify(Object.fromEntries(counts))}`);
    process.exit(1);
  }
}

import type { PersonalDataRule } from '../catalog/personal-data.js';

/** What the demo did, as its terminal summary tells it. */
export interface DemoFacts {
  readonly sandboxUrl: string;
  readonly recordsPerStream: number;
  readonly layout: string;
  readonly streams: readonly DemoStream[];
  /** Singer messages the run wrote, and their bytes. */
  readonly messages: number;
  readonly bytes: number;
  /** The personal_data rules the demo synced under. */
  readonly personalData: readonly PersonalDataRule[];
}

export interface DemoStream {
  readonly stream: string;
  /** RECORD messages counted as they passed. */
  readonly records: number;
  readonly seconds: number;
  readonly bookmark: string | null;
  /** The stream's first RECORD message as emitted, or undefined when it sent none. */
  readonly sample: string | undefined;
}

const count = (n: number): string => n.toLocaleString('en-US');

/**
 * The few lines the demo prints on a terminal instead of its messages: the
 * sandbox, each stream with its count, time and a sample record, what became
 * of the personal fields and of the messages and state, and what to try next.
 */
export function demoSummaryLines(facts: DemoFacts): string[] {
  return [
    `The demo started a sandbox of the report dump API at ${facts.sandboxUrl} (synthetic data, ${count(facts.recordsPerStream)} records per stream, ${facts.layout} layout) and synced ${facts.streams.length} streams from it:`,
    ...facts.streams.flatMap(streamLines),
    personalDataLine(facts.personalData),
    `On a terminal, its ${count(facts.messages)} Singer messages (${(facts.bytes / 1e6).toFixed(1)} MB) were counted, not printed; the state (the last STATE message, with the bookmarks) was not kept.`,
    'Redirected or piped, the demo writes every message to stdout, as a sync does.',
    'Next: npx tap-report-dump demo > messages.jsonl writes them to a file; README, Usage, syncs your own tenant (tap-report-dump sync --config config.json); docs/sandbox.md runs the sandbox on its own.',
  ];
}

function streamLines(stream: DemoStream): string[] {
  const head = `  ${stream.stream}: ${count(stream.records)} records in ${stream.seconds.toFixed(1)} s, bookmark ${stream.bookmark ?? 'none'}`;
  return stream.sample === undefined ? [head] : [head, `    ${stream.sample}`];
}

function personalDataLine(rules: readonly PersonalDataRule[]): string {
  if (rules.length === 0) {
    return 'Personal fields (user IDs, e-mail addresses, names) are shown as the sandbox serves them: the demo sets no personal_data policy; that setting hashes or drops them (README: Personal data and secrets).';
  }
  const policies = rules.map((rule) => `${rule.stream === undefined ? '' : `${rule.stream}.`}${rule.field} ${rule.policy}`).join(', ');
  return `Personal fields are shown as the demo's personal_data policy leaves them: ${policies}.`;
}

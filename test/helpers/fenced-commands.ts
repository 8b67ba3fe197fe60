/**
 * The shell commands of a Markdown document's ```sh blocks, as a reader would
 * type them: continuation lines joined, comments left out, an optional part
 * (`[--state state.json]`) typed in, and of alternatives (`json|markdown`)
 * the first.
 */
export interface FencedBlock {
  /** Line of the opening fence, 1-based. */
  line: number;
  commands: string[];
}

export function shellBlocks(markdown: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== '```sh') continue;
    const start = i + 1;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i].trim() !== '```'; i++) body.push(lines[i]);
    blocks.push({ line: start, commands: commandsOf(body) });
  }
  return blocks;
}

function commandsOf(body: readonly string[]): string[] {
  const joined = body.join('\n').replace(/\\\n\s*/g, ' ');
  return joined
    .split('\n')
    .map(withoutComment)
    .map(typedIn)
    .filter((command) => command !== '');
}

/** A `#` after whitespace and outside quotes starts a comment. */
function withoutComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]))) {
      return line.slice(0, i).trim();
    }
  }
  return line.trim();
}

/** `[--format json|markdown]` becomes `--format json`: the optional part typed, its first alternative chosen. */
function typedIn(command: string): string {
  return command.replace(/ \[([^\]]*)\]/g, (_all, inner: string) => ` ${inner.replace(/(\S+)\|\S+/g, '$1')}`);
}

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
  /** What the document shows a command prints: the comment lines right below it, joined. */
  shown: Map<string, string>;
}

export function shellBlocks(markdown: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== '```sh') continue;
    const start = i + 1;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i].trim() !== '```'; i++) body.push(lines[i]);
    blocks.push({ line: start, ...commandsOf(body) });
  }
  return blocks;
}

/** The info string of every opening fence (`sh`, `json`, `` for none), in order. */
export function fenceLanguages(markdown: string): string[] {
  const languages: string[] = [];
  let open = false;
  for (const line of markdown.split('\n')) {
    const fence = /^\s*```(.*)$/.exec(line);
    if (fence === null) continue;
    if (!open) languages.push(fence[1].trim());
    open = !open;
  }
  return languages;
}

function commandsOf(body: readonly string[]): Pick<FencedBlock, 'commands' | 'shown'> {
  const commands: string[] = [];
  const shown = new Map<string, string>();
  let last: string | undefined;
  for (const line of body.join('\n').replace(/\\\n\s*/g, ' ').split('\n')) {
    const command = typedIn(withoutComment(line));
    if (command !== '') commands.push((last = command));
    else if (last !== undefined && line.trim().startsWith('#')) shown.set(last, (shown.get(last) ?? '') + line.trim().slice(1).trim());
    else last = undefined;
  }
  return { commands, shown };
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

/** The words of a command as the shell splits them: on blanks outside quotes, the quotes removed (no `$`, backslash or glob is expanded). */
export function shellWords(command: string): string[] {
  const words: string[] = [];
  for (const match of command.matchAll(/(?:'[^']*'|"[^"]*"|[^\s'"]+)+/g)) words.push(match[0].replace(/'([^']*)'|"([^"]*)"/g, '$1$2'));
  return words;
}

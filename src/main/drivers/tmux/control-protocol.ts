/**
 * Pure parsing for tmux control mode (`tmux -C`): command lines out, reply blocks and
 * notifications in. No I/O. Lines arrive as latin1 strings so every byte survives as one char
 * (pane output is raw bytes, escaped only below 0x20 and for the backslash).
 */
import { DriverError } from '../contract';

/** What one control-mode line means to the client. */
export type ControlEvent =
  | { type: 'reply'; ok: boolean; lines: string[] }
  | { type: 'output'; pane: string; data: Buffer }
  | { type: 'pause'; pane: string }
  | { type: 'exit'; reason: string };

/**
 * Block-aware framing. Inside a `%begin … %end/%error` block every line is body (a body line may
 * start with `%`, e.g. `list-panes` printing `%3`), and only the terminator carrying the same
 * command number closes it. Blocks whose flags are not `1` did not come from our commands (the
 * attach greeting) and are dropped.
 */
export class ControlFramer {
  #block: { number: string; ours: boolean; lines: string[] } | undefined;

  /** Feeds one line (without its newline); returns what it completed. */
  feed(line: string): ControlEvent[] {
    if (this.#block) {
      const m = /^%(end|error) (\d+) (\d+) (\d+)$/.exec(line);
      if (m && m[3] === this.#block.number) {
        const block = this.#block;
        this.#block = undefined;
        return block.ours ? [{ type: 'reply', ok: m[1] === 'end', lines: block.lines.map(decodeBody) }] : [];
      }
      this.#block.lines.push(line);
      return [];
    }
    if (line.startsWith('%begin ')) {
      const [, , number, flags] = line.split(' ');
      this.#block = { number: number ?? '', ours: flags === '1', lines: [] };
      return [];
    }
    if (line.startsWith('%output ')) {
      const space = line.indexOf(' ', 8);
      if (space < 0) return [];
      return [{ type: 'output', pane: line.slice(8, space), data: unescapeOutput(line.slice(space + 1)) }];
    }
    if (line.startsWith('%extended-output ')) {
      // `%extended-output %pane age ... : data` (only with pause-after); same payload as %output.
      const parts = /^%extended-output (%\d+) .*? : (.*)$/.exec(line);
      return parts ? [{ type: 'output', pane: parts[1]!, data: unescapeOutput(parts[2]!) }] : [];
    }
    if (line.startsWith('%pause ')) return [{ type: 'pause', pane: line.slice(7).trim() }];
    if (line === '%exit' || line.startsWith('%exit ')) return [{ type: 'exit', reason: line.slice(6) }];
    return [];
  }
}

/** Body lines are UTF-8 text that was read as latin1. */
function decodeBody(line: string): string {
  return Buffer.from(line, 'latin1').toString('utf8');
}

/** Undoes tmux's `%output` escaping (`\ooo` octal bytes) of a latin1 line into raw bytes. */
export function unescapeOutput(text: string): Buffer {
  const out = Buffer.alloc(text.length);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c && i + 3 < text.length && /^[0-7]{3}$/.test(text.slice(i + 1, i + 4))) {
      out[n++] = parseInt(text.slice(i + 1, i + 4), 8) & 0xff;
      i += 3;
    } else if (c === 0x5c && text.charCodeAt(i + 1) === 0x5c) {
      out[n++] = 0x5c;
      i += 1;
    } else out[n++] = c & 0xff;
  }
  return out.subarray(0, n);
}

/**
 * Quotes one argument for tmux's command parser: single quotes, inside which nothing is special
 * (no `$`/`~` expansion, no `;` splitting, no `#` comments); an embedded quote becomes `'\''`.
 * A newline or NUL would end the command line, so such an argument is refused outright.
 */
export function quoteArg(arg: string): string {
  if (/[\n\r\0]/.test(arg)) {
    throw new DriverError('Invalid', 'a tmux argument may not contain a newline or NUL', { hint: 'send one line at a time' });
  }
  return `'${arg.replace(/'/g, "'\\''")}'`;
}

/** The control-mode command line for an argv vector (a vector in, exactly those args out). */
export function commandLine(args: readonly string[]): string {
  return `${args.map(quoteArg).join(' ')}\n`;
}

/**
 * One control-mode line running `commands` as a tmux command sequence (`a ; b`): tmux runs them
 * back to back, with no pane output read in between, answers each in its own reply block, and
 * skips the rest after the first that fails.
 */
export function sequenceLine(commands: ReadonlyArray<readonly string[]>): string {
  return `${commands.map((args) => args.map(quoteArg).join(' ')).join(' ; ')}\n`;
}

/**
 * `text` as a literal inside a tmux format (`#{==:#{x},<here>}`): `#`, `,` and `}` escaped as
 * `##`, `#,` and `#}`, so it can neither end the comparison nor start anything tmux would
 * expand (`#{…}`, `#(shell command)`, `#S`); tmux expands it back to exactly `text`.
 */
export function formatLiteral(text: string): string {
  return text.replace(/[#,}]/g, (c) => `#${c}`);
}

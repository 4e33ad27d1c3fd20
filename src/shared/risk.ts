/**
 * What a prompt must never hide: where a long text is cut (the middle, so the end — where `; rm -rf`
 * tends to be — stays visible) and cues for destructive commands anywhere in the arguments. One
 * source for the driver's summary, the panel's card and the keyboard's second-press rule.
 */
import type { JsonValue } from './wire';

/**
 * `text` in at most about `max` characters: its head and its tail with the cut marked in between
 * (`echo xxx…[312 chars cut]…; rm -rf app`). Never splits a surrogate pair.
 */
export function middleClip(text: string, max: number): { text: string; cut: number } {
  const chars = [...text];
  if (chars.length <= max) return { text, cut: 0 };
  const keep = Math.max(2, max - 20);
  const head = Math.ceil(keep * 0.45);
  const tail = keep - head;
  const cut = chars.length - head - tail;
  return { text: `${chars.slice(0, head).join('')}…[${cut} chars cut]…${chars.slice(chars.length - tail).join('')}`, cut };
}

/** A cue: its short name (the badge) and what it matches. */
interface Cue {
  name: string;
  test: RegExp;
}

// Word-ish boundaries: a command starts the text or follows a separator, a pipe, `sudo` or a space.
const CUES: readonly Cue[] = [
  { name: 'rm -rf', test: /(^|[\s;&|(`$])rm\s+(-[a-zA-Z]*[rR][a-zA-Z]*[fF]|-[a-zA-Z]*[fF][a-zA-Z]*[rR]|(-[rRfF]\s+){1,2}|--recursive|--force)/ },
  { name: 'force push', test: /git\s+push\b[^\n;&|]*(\s--force\b|\s-f\b|\s--force-with-lease\b|\s\+\S)/ },
  { name: 'push to main', test: /git\s+push\b[^\n;&|]*\s(\S+:)?(main|master)(\s|$)/ },
  { name: 'sudo', test: /(^|[\s;&|(`$])(sudo|doas)\s/ },
  { name: 'pipe to shell', test: /(curl|wget)\b[^\n;]*\|\s*(sudo\s+)?(ba|z|da|k)?sh\b/ },
  { name: 'DROP/TRUNCATE', test: /\b(DROP\s+(TABLE|DATABASE|SCHEMA)|TRUNCATE\s+(TABLE\s+)?\w)/i },
  { name: 'DELETE without WHERE', test: /\bDELETE\s+FROM\s+[\w."]+\s*(;|$)/i },
  { name: 'reset --hard', test: /git\s+(reset\s+--hard|clean\s+-[a-zA-Z]*f)/ },
  { name: 'disk write', test: /(\bmkfs(\.\w+)?\s|\bdd\s+[^\n]*\bof=\/dev\/|>\s*\/dev\/(sd|nvme|hd|vd)\w*)/ },
  { name: 'chmod 777', test: /chmod\s+(-R\s+)?0?777\b/ },
  { name: 'fork bomb', test: /:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/ },
  { name: 'kill all', test: /\b(killall|pkill)\s|\bkill\s+-9\s+-1\b/ },
  { name: 'shutdown', test: /(^|[\s;&|])(shutdown|reboot|poweroff|halt)(\s|$)/ },
];

/** Every string in `value`, depth-first (keys too: an op could carry a command as a key). */
function* strings(value: JsonValue | undefined, depth = 0): Generator<string> {
  if (depth > 32 || value === undefined || value === null) return;
  if (typeof value === 'string') yield value;
  else if (Array.isArray(value)) for (const v of value) yield* strings(v, depth + 1);
  else if (typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      yield k;
      yield* strings(v, depth + 1);
    }
}

/** The cues found anywhere in `args`, each named once, in the table's order. */
export function riskCues(args: JsonValue | undefined): string[] {
  const found = new Set<string>();
  for (const s of strings(args)) for (const cue of CUES) if (!found.has(cue.name) && cue.test.test(s)) found.add(cue.name);
  return CUES.map((c) => c.name).filter((n) => found.has(n));
}

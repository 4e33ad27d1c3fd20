/**
 * Text from agents and panes (channel names, args, messages) shown to a person: control characters
 * could forge extra log lines, rewrite the operator's terminal (ESC sequences) or split an error an
 * agent parses as one line, so every one is shown as an escape instead.
 */

// C0, DEL, C1, and the two Unicode line/paragraph separators some terminals and parsers break on.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeOne(c: string): string {
  const named = NAMED[c];
  if (named) return named;
  const code = c.charCodeAt(0);
  return code > 0xff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\x${code.toString(16).padStart(2, '0')}`;
}

/** `text` with every control character shown as `\n`, `\t`, `\x1b`, `\u2028`, …: one line, inert. */
export function escapeControl(text: string): string {
  return text.replace(CONTROL, escapeOne);
}

const SURROGATE = /[\ud800-\udfff]/;
// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `text` with every lone surrogate (not encodable as UTF-8) replaced by U+FFFD. */
export function wellFormed(text: string): string {
  // Every stored string passes here: most hold no surrogate at all, and a plain class scan is far
  // cheaper than the look-around below.
  return SURROGATE.test(text) ? text.replace(LONE_SURROGATE, '\ufffd') : text;
}

/** How much of a name an error quotes back. */
export const NAME_ECHO_CHARS = 64;

/**
 * A name someone sent (a tool, method, op, channel, driver or id), as an error quotes it back: at
 * most `max` characters, then `…`, so a megabyte name never comes back as a megabyte error. A cut
 * never splits a surrogate pair.
 */
export function clipName(name: unknown, max: number = NAME_ECHO_CHARS): string {
  const text = typeof name === 'string' ? name : String(name);
  if (text.length <= max) return text;
  const end = /[\ud800-\udbff]/.test(text[max - 1]!) ? max - 1 : max;
  return `${text.slice(0, end)}…`;
}

/**
 * How hidden text is shown, wherever it is hidden (a prompt's or record's args, the desktop
 * driver's read-back). Only its maker knows the text: whether a value was redacted is told by the
 * hub's list of redacted arg names, never by what a value looks like, since an agent may send
 * text that reads the same.
 */

/** A redacted value: the length of the secret itself, in characters (code points). */
export function redactedText(value: string): string {
  return `•••• (sensitive, ${[...value].length} chars)`;
}

/** The words for a request in titles and notifications, shared by the panel and the desktop app. */

/** How the built-in ops read after "wants to" (an unknown op reads as `run "<op>"`). */
const OP_PHRASES: Record<string, string> = {
  read: 'read',
  send: 'send',
  type: 'type',
  keys: 'press keys',
  key: 'press a key',
  click: 'click',
  observe: 'observe',
  tree: 'read the accessibility tree',
  find: 'find elements',
  'set-text': 'set text',
  activate: 'activate an element',
  screenshot: 'take a screenshot',
};

/** A request as an English clause: `press keys on tmux:%3`. */
export function opPhrase(op: string): string {
  return OP_PHRASES[op] ?? `run "${op}"`;
}

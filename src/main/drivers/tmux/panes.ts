/**
 * Pane facts as the driver reads them from tmux in one format string per pane: identity, where
 * it is, what runs in it, and the human-set grant options. Fields are separated by US (0x1f),
 * which tmux prints as is only to a UTF-8 client (the transport always asks for one); a line
 * with the wrong shape (a label containing the separator) fails closed.
 */
import { DriverError } from '../contract';
import type { PaneMarks } from './policy';

const SEP = '\u001f';

const FIELDS = [
  'pane_id',
  'pid',
  'session_id',
  'session_name',
  'window_index',
  'pane_index',
  'pane_current_command',
  'pane_pid',
  'pane_in_mode',
  'pane_dead',
  'history_size',
  'pane_height',
  '@uplink_profile',
  '@uplink_read',
  '@uplink_agent_label',
  '@uplink_first_label',
  '@uplink_last_read',
  '@name',
  'pane_title',
] as const;

/** The tmux format that prints one pane per line. */
export const PANE_FORMAT = FIELDS.map((f) => `#{${f}}`).join(SEP);

/** Fields a single-pane lookup leaves empty (see `PANE_LOOKUP_FORMAT`). */
const NOT_LOOKED_UP: ReadonlySet<string> = new Set(['pane_current_command', 'pane_pid', 'session_name', 'window_index', 'pane_index', 'pane_title']);

/**
 * `PANE_FORMAT` with what no op decides on left empty (same fields, same places): the process
 * name (tmux asks the OS about the pane's foreground process, the costliest field), its pid, the
 * `session:window.pane` target and the title, which only listings and the approval preview show.
 * Every field is work for tmux on each lookup, and a read or a send makes one.
 */
export const PANE_LOOKUP_FORMAT = FIELDS.map((f) => (NOT_LOOKED_UP.has(f) ? '' : `#{${f}}`)).join(SEP);

/** One pane as the driver sees it. */
export interface PaneInfo extends PaneMarks {
  /** The tmux server's pid: pane ids restart when the server does. */
  serverPid: string;
  sessionId: string;
  /** `session:window.pane`. */
  target: string;
  command: string;
  pid?: number;
  title: string;
  inMode: boolean;
  dead: boolean;
  historySize: number;
  height: number;
  /** `@uplink_last_read`: when a driver last read the pane (ms since the epoch), if ever. */
  lastRead?: number;
}

const PANE_ID = /^%\d+$/;

/** Parses one line of `PANE_FORMAT` output; undefined when it is not a pane line at all. */
export function parsePaneLine(line: string): PaneInfo | undefined {
  const f = line.split(SEP);
  const id = f[0] ?? '';
  if (!PANE_ID.test(id)) return undefined;
  if (f.length !== FIELDS.length) {
    return {
      id,
      readOff: true,
      malformed: true,
      serverPid: f[1] ?? '',
      sessionId: f[2] ?? '',
      target: '',
      command: '',
      title: '',
      inMode: false,
      dead: false,
      historySize: 0,
      height: 0,
    };
  }
  const [
    ,
    serverPid,
    sessionId,
    sessionName,
    windowIndex,
    paneIndex,
    command,
    pid,
    inMode,
    dead,
    history,
    height,
    profile,
    read,
    agentLabel,
    firstLabel,
    lastRead,
    label,
    title,
  ] = f as string[];
  const info: PaneInfo = {
    id,
    serverPid: serverPid!,
    sessionId: sessionId!,
    target: `${sessionName}:${windowIndex}.${paneIndex}`,
    command: command!,
    title: title!,
    inMode: inMode === '1',
    dead: dead === '1',
    historySize: Number(history) || 0,
    height: Number(height) || 0,
    readOff: read === 'off',
  };
  const pidNumber = Number(pid);
  if (pid && Number.isInteger(pidNumber) && pidNumber > 0) info.pid = pidNumber;
  if (label) info.label = label;
  if (profile) info.profile = profile;
  if (agentLabel) info.agentLabel = agentLabel;
  if (firstLabel) info.firstLabel = firstLabel;
  if (lastRead && Number.isFinite(Number(lastRead))) info.lastRead = Number(lastRead);
  return info;
}

/**
 * The fields a write's gate decides on, the session its echo is watched in, and every other field
 * of `PANE_LOOKUP_FORMAT` that could make its line malformed (the options, free text): all of the
 * lookup but the pane's id (the gate runs on the pane by id) and its history size and height,
 * which change with every line it prints. A field added to the lookup is gated unless left out here.
 */
const NOT_GATED: ReadonlySet<string> = new Set(['pane_id', 'history_size', 'pane_height']);
const GATE_FIELDS = FIELDS.filter((f) => !NOT_LOOKED_UP.has(f) && !NOT_GATED.has(f));
/** Where each of `GATE_FIELDS` stands in a lookup line. */
const GATE_INDEXES = GATE_FIELDS.map((f) => FIELDS.indexOf(f));

/** `GATE_FIELDS` as one format, printed as `gateValues` takes them out of a lookup line. */
export const GATE_FORMAT = GATE_FIELDS.map((f) => `#{${f}}`).join(SEP);

/**
 * The `GATE_FIELDS` of a `PANE_FORMAT` or `PANE_LOOKUP_FORMAT` line, exactly as tmux printed
 * them and as `GATE_FORMAT` prints them; undefined for a line of the wrong shape.
 */
export function gateValues(line: string): string | undefined {
  const f = line.split(SEP);
  if (f.length !== FIELDS.length) return undefined;
  return GATE_INDEXES.map((i) => f[i]!).join(SEP);
}

/** What a read decides on: the id, the server's pid (a restart reuses ids) and the marks its read block needs. */
const MARK_FIELDS = ['pane_id', 'pid', '@uplink_read', '@name', '@uplink_agent_label', '@uplink_first_label'] as const;

/**
 * The lookup of a read, which only asks whether the pane's content may be read: tmux's work
 * grows with every field, and a read is one lookup and one capture.
 */
export const PANE_MARKS_FORMAT = MARK_FIELDS.map((f) => `#{${f}}`).join(SEP);

/** A pane's read marks (`PANE_MARKS_FORMAT`): no tier, state or place, so it cannot gate a write. */
export interface ReadMarks extends Omit<PaneMarks, 'profile'> {
  serverPid: string;
}

/** Parses one line of `PANE_MARKS_FORMAT` output; undefined when it is not a pane line at all. */
export function parseMarksLine(line: string): ReadMarks | undefined {
  const f = line.split(SEP);
  const id = f[0] ?? '';
  if (!PANE_ID.test(id)) return undefined;
  if (f.length !== MARK_FIELDS.length) return { id, serverPid: f[1] ?? '', readOff: true, malformed: true };
  const [, serverPid, read, label, agentLabel, firstLabel] = f as string[];
  const marks: ReadMarks = { id, serverPid: serverPid!, readOff: read === 'off' };
  if (label) marks.label = label;
  if (agentLabel) marks.agentLabel = agentLabel;
  if (firstLabel) marks.firstLabel = firstLabel;
  return marks;
}

/**
 * Pane lines tmux printed of which none parses: the format came back rewritten (e.g. sanitized
 * for a client tmux thinks is not UTF-8). An empty list would pass for "no panes" (and for "no
 * other pane holds this label"), so it is an error. Only counts: the lines carry pane titles.
 */
export function unreadablePanes(count: number): DriverError {
  return new DriverError(
    'Upstream',
    `${count === 1 ? 'the pane line tmux printed could not be parsed' : `none of the ${count} pane lines tmux printed could be parsed`} (the pane format came back rewritten)`,
    {
      hint: 'check that `tmux` on PATH is tmux itself and current (`tmux -V`): a wrapper or an old tmux can rewrite the output',
    },
  );
}

/**
 * Parses `list-panes -a -F PANE_FORMAT` output, one entry per pane id (linked windows repeat);
 * `unreadablePanes` when lines were printed but none parses.
 */
export function parsePaneList(lines: readonly string[]): PaneInfo[] {
  const seen = new Set<string>();
  const panes: PaneInfo[] = [];
  for (const line of lines) {
    const pane = parsePaneLine(line);
    if (!pane || seen.has(pane.id)) continue;
    seen.add(pane.id);
    panes.push(pane);
  }
  const printed = lines.filter((line) => line !== '').length;
  if (panes.length === 0 && printed > 0) throw unreadablePanes(printed);
  return panes;
}

/**
 * `doctor` and `preview` for tmux: health in plain lines (a missing binary or an unreachable
 * server is one line with a hint), and what a pending op would do, in words, for the approval
 * prompt. Neither ever shows text marked sensitive.
 */
import { middleClip } from '../../../shared/risk';
import { execFile } from 'node:child_process';
import { escapeControl } from '../../../shared/escape';
import { DriverError, type ApprovalPreview, type DoctorReport } from '../contract';
import type { JsonValue } from '../../kernel';
import { configProblems } from './config';
import type { TmuxCore } from './core';
import { classifyKey, paneName } from './policy';

function tmuxVersion(tmux: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(tmux, ['-V'], { timeout: 5000, encoding: 'utf8' }, (error, stdout) => (error ? reject(error) : resolve(stdout.trim())));
  });
}

/** tmux version, server reachable, control mode, own pane, config problems. */
export async function doctor(core: TmuxCore): Promise<DoctorReport> {
  const lines: string[] = [];
  let ok = true;
  try {
    lines.push(`tmux: ${await tmuxVersion(core.transport.tmux)}`);
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    lines.push(
      missing
        ? 'tmux: not installed (not found on PATH) — hint: install tmux (e.g. `apt-get install tmux` or `brew install tmux`)'
        : `tmux: cannot run it (${(error as Error).message}) — hint: check the tmux installation`,
    );
    return { driver: 'tmux', ok: false, lines };
  }
  const where = core.socket() ?? "tmux's default socket";
  try {
    const panes = await core.listPanes();
    const sessions = new Set(panes.map((p) => p.sessionId)).size;
    lines.push(`server: reachable at ${where} (${sessions} session${sessions === 1 ? '' : 's'}, ${panes.length} pane${panes.length === 1 ? '' : 's'})`);
    lines.push(
      core.transport.mode === 'control'
        ? 'control mode: attached (delivery checks and idleness use %output events)'
        : `control mode: unavailable${core.transport.controlError ? ` (${core.transport.controlError})` : ''} — using one-shot tmux commands and polling`,
    );
  } catch (error) {
    ok = false;
    if (error instanceof DriverError && error.kind === 'Upstream') {
      // The server answered, but not in a way we can use (e.g. a pane list none of which parses).
      lines.push(`server: reachable at ${where}, but ${error.message.split('\n')[0]}${error.hint ? ` — hint: ${error.hint}` : ''}`);
    } else {
      const why = error instanceof DriverError ? (typeof error.evidence === 'string' ? error.evidence : error.message) : String(error);
      lines.push(
        `server: not reachable at ${where} (${why.split('\n')[0]}) — hint: start tmux (e.g. \`tmux new -s work\`), run Uplink inside tmux, or set tmux.socket in config.json`,
      );
    }
  }
  const own = core.envPane();
  lines.push(
    own
      ? `own pane: ${own} (envelopes carry pane:${own}; recv scans it for replies)`
      : 'own pane: unknown (not inside tmux on this server) — envelopes say pane:none and recv scans every readable pane',
  );
  const problems = configProblems(core.config());
  if (problems.length) ok = false;
  lines.push(...(problems.length ? problems.map((p) => `${p} — hint: fix the tmux section of config.json`) : ['config: ok']));
  return { driver: 'tmux', ok, lines };
}

/** A text as a summary quotes it: cut in the middle (its end stays visible), with its length when cut. */
function quote(text: unknown, max = 120): string {
  const s = typeof text === 'string' ? text : '';
  const { text: shown, cut } = middleClip(s, max);
  return cut ? `"${shown}" (${[...s].length} chars)` : `"${s}"`;
}

/** How much of the target pane a prompt shows: enough to recognise the screen, never a flood. */
export const PREVIEW_LINES = 12;
const PREVIEW_LINE_CHARS = 240;
const PREVIEW_BYTES = 4096;

/**
 * The action in words, e.g. `send "hello" to %3 (codex)`, and the pane's last lines so the operator
 * sees what the keys will land in — unless the pane is read-blocked, which then hides them too.
 */
export async function preview(core: TmuxCore, addr: string, op: string, args: JsonValue): Promise<ApprovalPreview | undefined> {
  const a = (args && typeof args === 'object' && !Array.isArray(args) ? args : {}) as Record<string, JsonValue>;
  let where = addr;
  let tierNote = '';
  const evidence: Pick<ApprovalPreview, 'lines' | 'lines_hidden'> = {};
  try {
    const pane = await core.pane(addr, true);
    const decision = core.decide(pane);
    where = `${paneName(pane)} [${pane.target}, ${pane.command}]`;
    tierNote = ` — pane tier ${decision.tier}${decision.readBlock ? ', read-blocked' : ''}`;
    if (decision.readBlock) evidence.lines_hidden = `pane content hidden: ${decision.readBlock}`;
    else evidence.lines = boundedLines(await core.capture(pane, PREVIEW_LINES));
  } catch {
    // An unresolvable address or a failed capture still gets a description; the op itself will report the error.
  }
  const text = describe(op, a, where);
  return text === undefined ? undefined : { text: text + tierNote, ...evidence };
}

/** Escaped, each line cut at a few hundred characters, the oldest dropped to fit the byte budget. */
function boundedLines(lines: string[]): string[] {
  const out: string[] = [];
  let bytes = 0;
  for (const raw of lines.slice(-PREVIEW_LINES).reverse()) {
    const chars = [...escapeControl(raw)];
    const line = chars.length > PREVIEW_LINE_CHARS ? `${chars.slice(0, PREVIEW_LINE_CHARS - 1).join('')}…` : chars.join('');
    bytes += Buffer.byteLength(line) + 1;
    if (bytes > PREVIEW_BYTES) break;
    out.unshift(line);
  }
  return out;
}

function describe(op: string, a: Record<string, JsonValue>, where: string): string | undefined {
  switch (op) {
    case 'send':
      return `send ${quote(a.message)} to ${where} (reply hint: ${typeof a.reply_hint === 'string' ? a.reply_hint : 'full'})`;
    case 'ask':
      return `ask ${quote(a.message)} in ${where} and wait for the answer (up to ${Math.round(Number(a.timeout_ms ?? 120000) / 1000)} s)`;
    case 'type': {
      const text = typeof a.text === 'string' ? a.text : '';
      const what = a.sensitive === true ? `${[...text].length} characters (sensitive, hidden)` : quote(text);
      return `type ${what} into ${where}${a.enter === true ? ' and press Enter' : ''}`;
    }
    case 'keys': {
      const keys = Array.isArray(a.keys) ? a.keys.filter((k): k is string => typeof k === 'string') : [];
      const dangerous = keys.some((k) => {
        try {
          return classifyKey(k) === 'dangerous';
        } catch {
          return false;
        }
      });
      return `press ${keys.join(', ') || '(no keys)'} in ${where}${dangerous ? ' (dangerous chord: needs godmode)' : ''}`;
    }
    case 'label':
      return `rename ${where} to ${quote(a.name)}`;
    case 'read':
      return `read the last ${typeof a.lines === 'number' ? a.lines : 50} lines of ${where}`;
    case 'await-idle':
      return `wait until ${where} is quiet for ${Number(a.quiet_ms ?? 1500) / 1000} s`;
    default:
      return undefined;
  }
}

/**
 * The desktop driver (Linux first): one channel per top-level application window, driven either
 * through its accessibility tree (`semantic_ui`, AT-SPI) or through pixels and synthetic input
 * (`visual_ui`, X11 XTest). Native work runs in a separate helper process (see README.md).
 */
import type { InteractionKind, JsonValue } from '../../kernel';
import { DriverError } from '../contract';
import type { ApprovalPreview, ChannelEntry, DoctorReport, Driver, DriverInfo, InvokeContext, OpSpec, RecvBatch, SendReceipt } from '../contract';
import { BindingTable } from './binding';
import { defaultStateDir, fileBindingStore } from './binding-store';
import type { Binding, SeenWindow } from './binding';
import { DEFAULT_CALL_TIMEOUT_MS } from './config';
import { globMatch } from '../glob';
import { redactedText } from '../../../shared/redaction';
import type { DesktopConfig } from './config';
import { HelperClient } from './helper-client';
import { chooseHelper } from './backend';
import type { HelperChoice } from './backend';
import { DESKTOP_OPS, opSpec } from './ops';
import { buildPreview } from './preview';
import { linuxProc } from './proc';
import type { ProcReader } from './proc';
import type { HelperDoctor, HelperTarget, HelperWindow, HelperWindows } from './protocol';

export { desktopConfigSchema } from './config';
export type { DesktopConfig } from './config';
export { DESKTOP_OPS } from './ops';
export type { ProcReader } from './proc';

/** Options of `createDesktopDriver`. */
export interface DesktopDriverOptions {
  /** X display for the helper (default: `env.DISPLAY`). */
  display?: string;
  /** Environment for the helper (default: `process.env`); must carry DBUS_SESSION_BUS_ADDRESS for AT-SPI. */
  env?: NodeJS.ProcessEnv;
  /** Live getter of the config file's `desktop` section (undefined when the file has none). */
  config?: () => DesktopConfig | undefined;
  /** argv that starts the helper (tests); default: the config's backend (see backend.ts). */
  helperCommand?: string[];
  /** The platform whose helper to choose (tests); default `process.platform`. */
  platform?: NodeJS.Platform;
  /** Deadline of one helper call; the config's `call_timeout_ms` wins when set. */
  callTimeoutMs?: number;
  /** Process facts (tests inject a fake to simulate a reused pid). */
  proc?: ProcReader;
  /**
   * Where bindings are shared between Uplink processes (default `$XDG_RUNTIME_DIR/uplink`, else a
   * private dir in the temp dir); `false` keeps them in this process only.
   */
  stateDir?: string | false;
}

/** The desktop driver: a `Driver` plus what the hub needs for per-channel interaction selection. */
export interface DesktopDriver extends Driver {
  /**
   * The interaction kinds that can serve this channel now: `semantic_ui` when the window's process
   * exposes an AT-SPI tree, `visual_ui` on an X11 display with XTest. The hub restricts kernel
   * selection to these kinds (an empty list means nothing can serve the channel).
   */
  interactionsFor(addr: string): Promise<InteractionKind[]>;
  /** The running helper's pid, if any (diagnostics and tests). */
  helperPid(): number | undefined;
  /** Stops the helper; later calls fail with `Unavailable`. */
  dispose(): Promise<void>;
}

/** X11 window ids, or AT-SPI frame ids on Wayland; `-<n>` marks a reused id's later process. */
const ADDR = /^(0x[0-9a-f]{1,8}|a11y-[0-9]{1,10}-[A-Za-z0-9_]{1,64})(-[0-9]{1,6})?$/;
const PREFERENCE: InteractionKind[] = ['semantic_ui', 'visual_ui'];

/** Sensitive text never comes back in a result: the read-back is replaced by its length. */
function hideText(result: JsonValue): JsonValue {
  if (!result || typeof result !== 'object' || Array.isArray(result) || typeof result.text !== 'string') return result;
  return { ...result, text: redactedText(result.text) };
}

/** Creates the desktop driver; the helper starts on the first call that needs it. */
export function createDesktopDriver(options: DesktopDriverOptions = {}): DesktopDriver {
  const config = (): DesktopConfig => options.config?.() ?? {};
  const env: NodeJS.ProcessEnv = { ...(options.env ?? process.env) };
  if (options.display !== undefined) env.DISPLAY = options.display;
  const stateDir = options.stateDir ?? defaultStateDir(env);
  const timeoutMs = (): number => config().call_timeout_ms ?? options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const choice = (): HelperChoice => {
    const chosen = chooseHelper(config(), env, options.platform);
    return options.helperCommand ? { ...chosen, command: options.helperCommand } : chosen;
  };
  // Windows pids and creation times come from the Win32 helper (under Wine they are Wine's, not /proc's).
  const helperProc: ProcReader = {
    async startTime(pid) {
      try {
        return ((await call('process', { args: { pid } })) as { start_time: number }).start_time;
      } catch (error) {
        if (error instanceof DriverError && error.kind === 'NotFound') return undefined;
        throw error;
      }
    },
    async processName(pid) {
      try {
        return ((await call('process', { args: { pid } })) as { name: string }).name;
      } catch {
        return undefined;
      }
    },
  };
  const proc: ProcReader = options.proc ?? {
    startTime: (pid) => (choice().backend === 'win32' ? helperProc : linuxProc).startTime(pid),
    processName: (pid) => (choice().backend === 'win32' ? helperProc : linuxProc).processName(pid),
  };
  const table = new BindingTable(proc, stateDir === false ? undefined : fileBindingStore(stateDir));
  let helper: HelperClient | undefined;
  let helperCommandUsed: string[] | undefined;

  const client = (): HelperClient => {
    const chosen = choice();
    const argv = chosen.command;
    if (!helper || argv.join('\0') !== helperCommandUsed?.join('\0')) {
      void helper?.dispose();
      helper = new HelperClient({ command: argv, env: { ...chosen.envDefaults, ...env }, callTimeoutMs: timeoutMs(), installHint: chosen.installHint });
      helperCommandUsed = argv;
    }
    return helper;
  };
  const call = (
    op: string,
    extra: { target?: HelperTarget; args?: JsonValue; interaction?: 'semantic_ui' | 'visual_ui' } = {},
    signal?: AbortSignal,
  ): Promise<JsonValue> => client().call({ op, ...extra }, { timeoutMs: timeoutMs(), signal });

  const denied = (win: Pick<HelperWindow, 'title' | 'class'>): boolean => {
    const globs = config().read_deny ?? [];
    return globs.some((g) => globMatch(g, win.title) || win.class.some((c) => globMatch(g, c)));
  };

  const list = async (): Promise<SeenWindow[]> => {
    const { windows, session } = (await call('windows')) as unknown as HelperWindows;
    // Addresses handed out by earlier `uplink` processes on this display keep their meaning here.
    table.load(session);
    const seen: SeenWindow[] = [];
    for (const win of windows) if (!denied(win)) seen.push(await table.sight(win));
    table.save(session);
    return seen;
  };

  /** The binding of an address: first sight happens here when the address was never listed. */
  const bindingFor = async (addr: string): Promise<Binding> => {
    const known = table.get(addr);
    if (known) return known;
    const seen = await list();
    if (!ADDR.test(addr)) {
      // Titles and classes are not unique and outlive processes: never resolve a window by label.
      const hits = seen.filter((s) => s.window.title === addr || s.window.class.includes(addr)).map((s) => `desktop:${s.addr}`);
      throw new DriverError('Invalid', `desktop channels are addressed by window id, not by label (desktop:${addr})`, {
        hint:
          hits.length === 0
            ? 'run channel_list to see the open windows'
            : hits.length === 1
              ? `use ${hits[0]}`
              : `${hits.length} windows match: ${hits.join(', ')} — pick one`,
      });
    }
    // An address bound by an earlier Uplink process (now in the table) names that process only.
    const stored = table.get(addr);
    if (stored) return stored;
    const hit = seen.find((s) => s.addr === addr);
    if (!hit) throw new DriverError('NotFound', `no window desktop:${addr}`, { hint: 'run channel_list to see the open windows' });
    if (!hit.binding)
      throw new DriverError('Rejected', `desktop:${addr} cannot be bound`, { hint: 'only windows of local processes can be driven', evidence: hit.mismatch });
    return hit.binding;
  };

  /** Binding plus the /proc half of the integrity check; the helper re-checks everything at the moment of acting. */
  const checkedTarget = async (addr: string): Promise<HelperTarget> => {
    const binding = await bindingFor(addr);
    // The config is live: a window denied after it was bound is refused from then on.
    if (denied(binding))
      throw new DriverError('Rejected', `desktop:${addr} is hidden by the desktop.read_deny config`, { hint: 'ask the operator to change read_deny' });
    const problem = await table.checkProcess(binding);
    if (problem) {
      const now = table.currentAddr(binding.window);
      const hint =
        now && now !== addr
          ? `window ${binding.window} now belongs to another process as desktop:${now}; list channels and act on that channel if you mean it`
          : 'list channels again and act on the new channel';
      throw new DriverError('Rejected', 'target changed', { hint, evidence: problem });
    }
    return { window: binding.window, pid: binding.pid, start_time: binding.start_time, ...(binding.image ? { image: binding.image } : {}) };
  };

  const interactionsFor = async (addr: string): Promise<InteractionKind[]> => {
    const target = await checkedTarget(addr);
    const { interactions } = (await call('interactions', { target })) as { interactions: InteractionKind[] };
    return interactions;
  };

  const chooseInteraction = async (addr: string, spec: OpSpec, ctx?: InvokeContext): Promise<'semantic_ui' | 'visual_ui'> => {
    const kinds = spec.interactions ?? ['typed'];
    const asked = ctx?.interaction;
    if (asked !== undefined) {
      if (asked === 'typed' || !kinds.includes(asked)) {
        throw new DriverError('Invalid', `${spec.op} cannot run through ${asked}`, { hint: `${spec.op} supports ${kinds.join(', ')}` });
      }
      return asked;
    }
    if (kinds.length === 1) return kinds[0] as 'semantic_ui' | 'visual_ui';
    // No kernel choice (a direct caller): the preferred kind this channel has, decided before acting.
    const available = await interactionsFor(addr);
    const pick = PREFERENCE.find((k) => kinds.includes(k) && available.includes(k));
    if (!pick) throw new DriverError('Unavailable', `no interaction kind can serve ${spec.op} on desktop:${addr}`, { hint: 'run doctor' });
    return pick as 'semantic_ui' | 'visual_ui';
  };

  const driver: DesktopDriver = {
    info(): DriverInfo {
      return {
        id: 'desktop',
        kind: 'capability',
        summary:
          'Desktop windows: the accessibility tree (semantic_ui: AT-SPI on Linux, MSAA on Windows) and pixels + synthetic input (visual_ui: X11 XTest, Win32 SendInput)',
      };
    },

    async channels(): Promise<ChannelEntry[]> {
      const entries: ChannelEntry[] = [];
      for (const { addr, window: w, binding, mismatch } of await list()) {
        entries.push({
          channel: `desktop:${addr}`,
          labels: [...new Set([w.title, ...w.class].filter((l) => l.trim() !== ''))],
          detail: {
            window: w.window,
            pid: binding?.pid ?? w.pid,
            process_name: w.process_name,
            title: w.title,
            class: w.class,
            geometry: w.geometry,
            focused: w.focused,
            interactions: mismatch ? [] : w.interactions,
            ...(binding ? { bound: { pid: binding.pid, start_time: binding.start_time, since: binding.bound_at } } : {}),
            ...(mismatch ? { binding_mismatch: mismatch } : {}),
          },
        });
        // The id's previous address stays visible (and refused) while the id is reused, so a caller
        // holding it learns what happened instead of a bare "no channel".
        const prev = table.previousAddr(w.window);
        const old = prev ? table.get(prev) : undefined;
        if (prev && old) {
          const gone = (await table.checkProcess(old)) ?? 'bound process changed';
          entries.push({
            channel: `desktop:${prev}`,
            labels: [],
            detail: {
              window: w.window,
              pid: old.pid,
              title: old.title,
              stale: true,
              interactions: [],
              binding_mismatch: `${gone}; the window id now belongs to desktop:${addr}`,
            },
          });
        }
      }
      return entries;
    },

    ops(): OpSpec[] {
      return DESKTOP_OPS.map((o) => ({ ...o }));
    },

    async send(): Promise<SendReceipt> {
      throw new DriverError('Invalid', 'desktop channels take ops, not messages', { hint: 'use channel_act with op type (or set-text) to enter text' });
    },

    async invoke(addr, op, args, ctx, signal): Promise<JsonValue> {
      const spec = opSpec(op);
      if (!spec) throw new DriverError('Invalid', `unknown desktop op ${op}`, { hint: `ops: ${DESKTOP_OPS.map((o) => o.op).join(', ')}` });
      // The kernel has validated args against the op's schema: the helper gets them as they are.
      const interaction = await chooseInteraction(addr, spec, ctx);
      const target = await checkedTarget(addr);
      const result = await call(op, { target, args, interaction }, signal);
      return (args as { sensitive?: boolean }).sensitive === true ? hideText(result) : result;
    },

    /**
     * What `invoke` would refuse before acting: the interaction, the window's binding and deny
     * list, and, for an element op through the accessibility tree, that its path still resolves.
     */
    async precheck(addr, op, args, ctx): Promise<void> {
      const spec = opSpec(op);
      if (!spec) throw new DriverError('Invalid', `unknown desktop op ${op}`, { hint: `ops: ${DESKTOP_OPS.map((o) => o.op).join(', ')}` });
      const interaction = await chooseInteraction(addr, spec, ctx);
      const target = await checkedTarget(addr);
      const path = (args as { path?: unknown } | null)?.path;
      if (interaction === 'semantic_ui' && typeof path === 'string') await call('element', { target, args: { path } });
    },

    async recv(cursor?: number): Promise<RecvBatch> {
      return { items: [], next_cursor: cursor ?? 0 };
    },

    async doctor(): Promise<DoctorReport> {
      const chosen = choice();
      const lines = [`backend: ${chosen.backend} — ${chosen.reason}`, `helper: ${chosen.command.join(' ')}`];
      try {
        const report = (await call('doctor')) as unknown as HelperDoctor;
        return { driver: 'desktop', ok: report.ok, lines: [...lines, ...report.lines] };
      } catch (error) {
        const message = error instanceof DriverError ? `${error.message}${error.hint ? ` — hint: ${error.hint}` : ''}` : String(error);
        return { driver: 'desktop', ok: false, lines: [...lines, `helper failed: ${message}`] };
      }
    },

    async preview(addr, op, args): Promise<ApprovalPreview | undefined> {
      return buildPreview({ addr, op, args, binding: table.get(addr), checkedTarget, call, maxWidth: config().preview_max_width });
    },

    interactionsFor,

    helperPid(): number | undefined {
      return helper?.pid;
    },

    async dispose(): Promise<void> {
      await helper?.dispose();
    },
  };
  return driver;
}

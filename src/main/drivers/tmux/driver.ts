/**
 * The tmux `Driver`: channels are panes (`tmux:%N`, or `tmux:<label>` from the pane option
 * `@name`), `send` types a verified envelope, `recv` finds inbound envelopes, and the ops read,
 * wait for, type into, press keys in, label and ask panes — every write gated in the driver
 * itself by per-pane tiers, read blocks and the read-first guard.
 */
import { DriverError, type ChannelEntry, type Driver, type InvokeContext, type SendReceipt, type SendRequest, type TierSpec } from '../contract';
import type { JsonValue } from '../../kernel';
import { TmuxCore, type TmuxDriverOptions } from './core';
import { doctor, preview } from './doctor';
import { Inbox } from './inbox';
import { TMUX_OPS } from './ops';
import { precheckOp, runOp, send as sendMessage } from './pane-ops';
import { parseTier, TIERS, type Tier } from './policy';

/** What each tier lets an agent do in a pane, as the panel shows it beside the tier control. */
const TIER_MEANING: Record<Tier, Omit<TierSpec, 'name'>> = {
  observer: { description: 'read and wait for the pane; nothing that types into it', risk: 'low' },
  operator: { description: 'also send messages, ask, type text, press benign keys and label the pane', risk: 'medium' },
  godmode: { description: 'also press any Ctrl/Meta chord (C-c, M-x, ^D…)', risk: 'high' },
};
const TIER_SPECS: TierSpec[] = TIERS.map((name) => ({ name, ...TIER_MEANING[name] }));

/** Builds the driver; nothing connects until the first call. */
export function buildTmuxDriver(options: TmuxDriverOptions = {}): Driver {
  const core = new TmuxCore(options);
  const inbox = new Inbox(core);

  return {
    info: () => ({
      id: 'tmux',
      kind: 'both',
      summary: 'Cross-pane messaging and pane ops on a tmux server (tmux:%N or tmux:<label>)',
      tiers: TIER_SPECS.map((t) => ({ ...t })),
    }),

    async channels(): Promise<ChannelEntry[]> {
      const own = core.envPane();
      return (await core.listPanes()).map((pane) => {
        const decision = core.decide(pane);
        const detail: { [key: string]: JsonValue } = {
          target: pane.target,
          command: pane.command,
          tier: decision.tier,
          tier_source: decision.source,
          readable: !decision.readBlock,
          // A title can carry what the pane shows (a host, a path): hidden when reading is blocked.
          title: decision.readBlock ? '' : pane.title,
        };
        if (pane.pid !== undefined) detail.pid = pane.pid;
        if (pane.id === own) detail.own = true;
        return { channel: `tmux:${pane.id}`, labels: pane.label ? [pane.label] : [], detail };
      });
    },

    ops: () => TMUX_OPS.map((op) => structuredClone(op)),

    send: (addr: string, request: SendRequest, ctx?: InvokeContext): Promise<SendReceipt> =>
      sendMessage(core, addr, request?.message, request?.reply_hint, ctx),

    invoke: (addr: string, op: string, args: JsonValue, ctx?: InvokeContext, signal?: AbortSignal) => runOp(core, addr, op, args, ctx, signal),

    precheck: (addr: string, op: string, args: JsonValue, ctx?: InvokeContext) => precheckOp(core, addr, op, args, ctx),

    recv: (cursor?: number) => inbox.recv(cursor),

    doctor: () => doctor(core),

    preview: (addr: string, op: string, args: JsonValue) => preview(core, addr, op, args),

    /**
     * Human-only (panel/CLI): stores the tier in the pane option `@uplink_profile`, so it is
     * visible in tmux and survives Uplink restarts. `default` removes it (config decides again).
     */
    async setTier(addr: string, tier: string): Promise<void> {
      if (tier !== 'default' && !parseTier(tier)) {
        throw new DriverError('Invalid', `unknown tier "${tier}"`, { hint: 'use observer, operator, godmode, or default (remove the pane grant)' });
      }
      const pane = await core.pane(addr);
      await core.run(
        tier === 'default' ? ['set-option', '-p', '-u', '-t', pane.id, '@uplink_profile'] : ['set-option', '-p', '-t', pane.id, '@uplink_profile', tier],
      );
    },

    dispose: () => core.transport.dispose(),
  };
}

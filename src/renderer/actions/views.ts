/** Channels, providers, rules and settings: loads and operator actions. */
import type { AgentEntry, ArgConstraints, RunOpResult, SelectionQuery } from '../../shared/panel-types';
import type { JsonValue } from '../../shared/wire';
import { getApi } from '../api';
import { get, load, message, set, toast } from './common';

/** Fetches into the store (loading and error states included). */
export async function loadChannels(): Promise<void> {
  await load(
    (list) => set((s) => ({ channels: { ...s.channels, list } })),
    () => get().channels.list,
    () => getApi().listChannels(),
  );
}

export function selectChannel(channel: string | undefined): void {
  set({ selectedChannel: channel, view: 'channels' });
  if (channel) {
    void describeChannel(channel);
    void previewChannel(channel);
  }
}

export async function describeChannel(channel: string): Promise<void> {
  await load(
    (l) => set((s) => ({ channels: { ...s.channels, described: { ...s.channels.described, [channel]: l } } })),
    () => get().channels.described[channel],
    () => getApi().describeChannel({ channel }),
  );
}

export async function previewChannel(channel: string): Promise<void> {
  await load(
    (l) => set((s) => ({ channels: { ...s.channels, previews: { ...s.channels.previews, [channel]: l } } })),
    () => get().channels.previews[channel],
    () => getApi().previewChannel({ channel }),
  );
}

/** Runs an op as the operator; resolves with the result for the form to show. */
export async function runOp(channel: string, op: string, args: JsonValue): Promise<RunOpResult> {
  try {
    return await getApi().runOp({ channel, op, args });
  } catch (error) {
    return { ok: false, error: message(error) };
  }
}

export async function setTier(channel: string, tier: string): Promise<void> {
  try {
    await getApi().setTier({ channel, tier });
    toast('info', `${channel} is now ${tier}`);
    await loadChannels();
    await describeChannel(channel);
  } catch (error) {
    toast('error', message(error));
  }
}

/** Fetches into the store (loading and error states included). */
export async function loadProviders(): Promise<void> {
  await load(
    (list) => set((s) => ({ providers: { ...s.providers, list } })),
    () => get().providers.list,
    () => getApi().listProviders(),
  );
}

export async function explainSelection(query: SelectionQuery): Promise<void> {
  await load(
    (explanation) => set((s) => ({ providers: { ...s.providers, explanation } })),
    () => get().providers.explanation,
    () => getApi().explainSelection(query),
  );
}

/** Fetches into the store (loading and error states included). */
export async function loadSettings(): Promise<void> {
  await load(
    (settings) => set((s) => ({ settings: { ...s.settings, settings } })),
    () => get().settings.settings,
    () => getApi().getSettings(),
  );
}

/** Fetches into the store (loading and error states included). */
export async function loadRules(): Promise<void> {
  await load(
    (rules) => set((s) => ({ settings: { ...s.settings, rules } })),
    () => get().settings.rules,
    () => getApi().listRules(),
  );
}

export async function revokeRule(ruleId: string): Promise<void> {
  try {
    await getApi().revokeRule({ rule_id: ruleId });
    toast('info', `rule ${ruleId} revoked`);
    await loadRules();
  } catch (error) {
    toast('error', message(error));
  }
}

/** Puts a proposed rule in force, as the panel showed it (`digest`). */
export async function confirmRule(ruleId: string, digest: string): Promise<void> {
  try {
    await getApi().confirmRule({ rule_id: ruleId, digest });
    toast('info', `rule ${ruleId} confirmed: it is in force`);
    await loadRules();
  } catch (error) {
    toast('error', message(error));
  }
}

/** Rewrites a rule's scope; true when the hub took it. */
export async function updateRule(ruleId: string, scope: { channel: string; ops: string[]; agent?: string; args?: ArgConstraints }): Promise<boolean> {
  try {
    await getApi().updateRule({ rule_id: ruleId, ...scope });
    toast('info', `rule ${ruleId} saved`);
    await loadRules();
    return true;
  } catch (error) {
    toast('error', message(error));
    return false;
  }
}

export async function loadSessionGrants(): Promise<void> {
  await load(
    (sessionGrants) => set((s) => ({ settings: { ...s.settings, sessionGrants } })),
    () => get().settings.sessionGrants,
    () => getApi().listSessionGrants(),
  );
}

export async function revokeSessionGrant(grantId: string): Promise<void> {
  try {
    await getApi().revokeSessionGrant({ grant_id: grantId });
    toast('info', 'session grant revoked');
    await loadSessionGrants();
  } catch (error) {
    toast('error', message(error));
  }
}

export async function setApprovalTimeout(ms: number): Promise<void> {
  try {
    const settings = await getApi().setApprovalTimeout({ timeout_ms: ms });
    set((s) => ({ settings: { ...s.settings, settings: { loading: false, data: settings } } }));
    toast('info', `approval timeout set to ${Math.round(ms / 1000)} s`);
  } catch (error) {
    toast('error', message(error));
  }
}

/** Named agent credentials; undefined (with a toast) when the call failed. */
export async function listAgents(): Promise<AgentEntry[] | undefined> {
  try {
    return await getApi().listAgents();
  } catch (error) {
    toast('error', message(error));
    return undefined;
  }
}

/** Creates an agent; resolves with its token (shown once) or undefined (with a toast). */
export async function createAgent(name: string): Promise<{ id: string; token: string } | undefined> {
  try {
    return await getApi().createAgent({ name });
  } catch (error) {
    toast('error', message(error));
    return undefined;
  }
}

export async function revokeAgent(name: string): Promise<void> {
  try {
    await getApi().revokeAgent({ name });
    toast('info', `agent ${name} revoked`);
  } catch (error) {
    toast('error', message(error));
  }
}

/** One frame of a window for a live view (kept out of the store: it changes several times a second). */
export async function windowFrame(channel: string): Promise<{ image_png?: string; error?: string; warnings?: string[] }> {
  try {
    const preview = await getApi().previewChannel({ channel });
    const warnings = preview.warnings?.length ? { warnings: preview.warnings } : {};
    return preview.image_png ? { image_png: preview.image_png, ...warnings } : { error: preview.error ?? 'no image', ...warnings };
  } catch (error) {
    return { error: message(error) };
  }
}

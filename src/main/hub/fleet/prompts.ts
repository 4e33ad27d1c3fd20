/**
 * Every hub's prompts on every panel of the fleet: this hub publishes its own as they are raised
 * and decided, and lists another hub's (ids and channel prefixed with that hub's name) while that
 * hub is connected. The owning hub alone decides; a withdrawn prompt is still pending there.
 */
import type { Msg } from 'nats';
import type { InteractionKind, JsonValue } from '../../kernel';
import { Emitter } from '../../../shared/emitter';
import type { ApprovalEvent, Disposer, PendingApproval, RecordedAuthorization } from '../types';
import { decode, encode, MAX_PROMPT_BYTES, PROTOCOL_VERSION, promptList, subjects } from './messages';
import type { FleetPrompt, FleetPromptEvent } from './messages';
import type { FleetLink } from './link';
import { declared } from './names';

/** A prompt as it travels: this hub's own ids and channel, the agent as declared, a screenshot only if it fits. */
export function toFleetPrompt(a: PendingApproval): FleetPrompt {
  const { hub: _hub, redacted_args: _redacted, agent, preview, ...rest } = a; // only the owner's panel may scope it
  const out: FleetPrompt = { ...rest, agent: declared(agent) };
  if (preview)
    out.preview = {
      ...preview,
      ...(preview.warnings ? { warnings: preview.warnings.slice(0, 256) } : {}),
      ...(preview.lines ? { lines: preview.lines.slice(-256) } : {}),
    };
  if (out.preview?.image_png && encode({ v: PROTOCOL_VERSION, hub: 'x', type: 'added', approval: out }).byteLength > MAX_PROMPT_BYTES) {
    const { image_png: _image, ...small } = out.preview;
    out.preview = {
      ...small,
      warnings: [...(small.warnings ?? []).slice(0, 255), "the screenshot is too large to travel in the fleet: see it on the owning hub's panel"],
    };
  }
  return out;
}

/** Another hub's prompt as this hub lists it: ids and channel prefixed with that hub's name. */
function fromFleetPrompt(hub: string, p: FleetPrompt): PendingApproval {
  const { rule_channel: _stable, agent, ...rest } = p;
  return {
    ...rest,
    approval_id: `${hub}/${p.approval_id}`,
    channel: `${hub}/${p.channel}`,
    agent: { ...agent },
    interaction: p.interaction as InteractionKind,
    hub,
  };
}

export class FleetPrompts {
  readonly #link: FleetLink;
  readonly #peers: { has(hub: string): boolean };
  readonly #fetch: (hub: string) => Promise<JsonValue>;
  /** Other hubs' pending prompts, by hub, by their own approval id. */
  #prompts = new Map<string, Map<string, PendingApproval>>();
  #listeners = new Emitter<ApprovalEvent>();

  /** `peers`: the hubs connected now; `fetch`: asks a hub for its pending prompts. */
  constructor(link: FleetLink, peers: { has(hub: string): boolean }, fetch: (hub: string) => Promise<JsonValue>) {
    this.#link = link;
    this.#peers = peers;
    this.#fetch = fetch;
  }

  /** Tells the fleet of one of this hub's approval events. */
  publish(event: ApprovalEvent): void {
    if (!this.#link.nc || !this.#link.connected) return;
    const hub = this.#link.name;
    let message: FleetPromptEvent;
    if (event.type === 'added' || event.type === 'updated') {
      // Only this hub's own prompts: another hub's are that hub's to publish.
      if (event.approval.hub) return;
      message = { v: PROTOCOL_VERSION, hub, type: event.type, approval: toFleetPrompt(event.approval) };
    } else if (event.type === 'resolved') {
      message = {
        v: PROTOCOL_VERSION,
        hub,
        type: 'resolved',
        approval_id: event.approval_id,
        granted: event.granted,
        authorized: event.authorized,
        ...(event.by ? { by: event.by.slice(0, 512) } : {}),
        ...(event.reason ? { reason: event.reason.slice(0, 2000) } : {}),
        ...(event.decision ? { decision: event.decision } : {}),
      };
    } else return;
    try {
      this.#link.send(subjects.prompts(hub), encode(message));
    } catch {
      // NATS went away: the others withdraw this hub's prompts and fetch them again on reconnect.
    }
  }

  /** Another hub's approval event, as published on its subject: believed only when signed by that hub (with a roster). */
  heard(msg: Msg): void {
    const e = decode('prompt', msg.data);
    if (!e || msg.subject !== subjects.prompts(e.hub) || e.hub === this.#link.name || !this.#peers.has(e.hub)) return;
    if (!this.#link.believe(msg, e.hub)) return;
    const mine = this.#promptsOf(e.hub);
    if (e.type === 'added') {
      const approval = fromFleetPrompt(e.hub, e.approval);
      mine.set(e.approval.approval_id, approval);
      this.#emit({ type: 'added', approval });
    } else if (e.type === 'updated') {
      // Only a prompt this hub lists: one it missed comes with the next sync.
      if (!mine.has(e.approval.approval_id)) return;
      const approval = fromFleetPrompt(e.hub, e.approval);
      mine.set(e.approval.approval_id, approval);
      this.#emit({ type: 'updated', approval });
    } else if (mine.delete(e.approval_id)) {
      const { v: _v, hub: _hub, type: _type, approval_id, authorized, ...rest } = e;
      this.#emit({ type: 'resolved', approval_id: `${e.hub}/${approval_id}`, authorized: authorized as RecordedAuthorization, ...rest });
    }
  }

  /** Fetches a hub's pending prompts (it just appeared): they show here until it decides them. */
  async sync(hub: string): Promise<void> {
    const before = new Set(this.#prompts.get(hub)?.keys() ?? []);
    let list: FleetPrompt[] | undefined;
    try {
      list = promptList(await this.#fetch(hub));
    } catch {
      return; // Out of reach again: its presence will bring it back.
    }
    if (!list || !this.#peers.has(hub)) return;
    const mine = this.#promptsOf(hub);
    const now = new Set(list.map((p) => p.approval_id));
    for (const p of list) {
      if (mine.has(p.approval_id)) continue;
      const approval = fromFleetPrompt(hub, p);
      mine.set(p.approval_id, approval);
      this.#emit({ type: 'added', approval });
    }
    // Gone there while this hub was not listening (one that arrived meanwhile is kept).
    for (const id of before)
      if (!now.has(id) && mine.delete(id)) this.#emit({ type: 'withdrawn', approval_id: `${hub}/${id}`, reason: `hub ${hub} no longer has this prompt` });
  }

  /** Stops showing a hub's prompts (it is out of reach), saying why. */
  withdrawAll(hub: string, reason: string): void {
    const mine = this.#prompts.get(hub);
    if (!mine) return;
    this.#prompts.delete(hub);
    for (const id of mine.keys()) this.#emit({ type: 'withdrawn', approval_id: `${hub}/${id}`, reason });
  }

  /** Other hubs' pending prompts, in no particular order. */
  list(): PendingApproval[] {
    return [...this.#prompts.values()].flatMap((m) => [...m.values()]);
  }

  /** Told of other hubs' prompts as they come and go. */
  onApprovals(listener: (event: ApprovalEvent) => void): Disposer {
    return this.#listeners.on(listener);
  }

  #promptsOf(hub: string): Map<string, PendingApproval> {
    let mine = this.#prompts.get(hub);
    if (!mine) this.#prompts.set(hub, (mine = new Map()));
    return mine;
  }

  #emit(event: ApprovalEvent): void {
    this.#listeners.emit(event);
  }
}

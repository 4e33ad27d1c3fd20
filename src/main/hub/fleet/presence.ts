/**
 * Who is in the fleet: each hub says it is present every beat (with how many operator panels it
 * has attached); a hub unheard for three beats, or that says it is leaving, is gone. While another
 * hub has a panel attached, this hub counts as watched.
 */
import { randomBytes } from 'node:crypto';
import type { Msg } from 'nats';
import type { Hub } from '../hub';
import type { Disposer, FleetMemberStatus } from '../types';
import { decode, encode, PROTOCOL_VERSION, subjects } from './messages';
import type { FleetLink } from './link';

/** What presence tells the rest of the membership. */
export interface PresenceEvents {
  /** A hub is heard from that was not connected (new, or back). */
  appeared(hub: string): void;
  /** A connected hub left or went silent; `why` says which. */
  gone(hub: string, why: string): void;
  /** Who is in the fleet changed. */
  changed(): void;
}

export class Presence {
  readonly #link: FleetLink;
  readonly #core: Pick<Hub, 'attachPanel' | 'panelsAttached'>;
  readonly #heartbeatMs: number;
  readonly #events: PresenceEvents;
  #instance = randomBytes(8).toString('hex');
  #since = Date.now();
  #peers = new Map<string, { instance: string; since: number; seen: number; panels: number }>();
  /** Hubs heard from before that are out of reach now: since when, and why. */
  #lost = new Map<string, { since: number; problem: string }>();
  /** Held while another hub has a panel attached, so this hub asks its prompts instead of denying them. */
  #panelHold: Disposer | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  #warnedTwin = false;

  constructor(link: FleetLink, core: Pick<Hub, 'attachPanel' | 'panelsAttached'>, heartbeatMs: number, events: PresenceEvents) {
    this.#link = link;
    this.#core = core;
    this.#heartbeatMs = heartbeatMs;
    this.#events = events;
  }

  /** Starts the beat. */
  start(): void {
    this.#timer = setInterval(() => this.#beat(), this.#heartbeatMs);
    this.#timer.unref?.();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
  }

  /** Says this hub is present (or leaving), with how many of its own operator panels are attached. */
  announce(leaving = false): void {
    if (!this.#link.nc || !this.#link.connected) return;
    const panels = this.#ownPanels();
    try {
      this.#link.send(
        subjects.presence(this.#link.name),
        encode({ v: PROTOCOL_VERSION, hub: this.#link.name, instance: this.#instance, since: this.#since, panels, ...(leaving ? { leaving } : {}) }),
      );
    } catch {
      // Closed meanwhile: the next beat (or nobody) says it.
    }
  }

  /** Another hub's presence, as published on its subject: believed only when signed by that hub (with a roster). */
  heard(msg: Msg): void {
    const p = decode('presence', msg.data);
    if (!p || msg.subject !== subjects.presence(p.hub) || !this.#link.believe(msg, p.hub)) return;
    if (p.hub === this.#link.name) {
      if (p.instance !== this.#instance && !this.#warnedTwin) {
        this.#warnedTwin = true;
        this.#link.log(`another hub also calls itself ${p.hub} — hint: give each hub its own fleet.name in config.json`);
      }
      return;
    }
    if (p.leaving) return this.#gone(p.hub, `hub ${p.hub} left the fleet`);
    const known = this.#peers.get(p.hub);
    const panels = p.panels ?? 0;
    this.#peers.set(p.hub, { instance: p.instance, since: p.since, seen: Date.now(), panels });
    if (!known || known.panels !== panels) this.#holdPanels();
    if (known) return;
    // A newcomer learns of this hub at once rather than at the next beat, and shows its prompts here.
    this.#lost.delete(p.hub);
    this.announce();
    this.#events.appeared(p.hub);
    this.#events.changed();
  }

  /** This hub lost the NATS server: every hub is out of reach now. Returns the hubs that were connected. */
  lostAll(problem: string): string[] {
    const now = Date.now();
    const hubs = [...this.#peers.keys()];
    for (const hub of hubs) this.#lost.set(hub, { since: now, problem });
    this.#peers.clear();
    this.#holdPanels();
    return hubs;
  }

  has(hub: string): boolean {
    return this.#peers.has(hub);
  }

  /** The connected hubs, by name. */
  hubs(): string[] {
    return [...this.#peers.keys()].sort();
  }

  /** This hub first, then the others by name (connected and unreachable alike). */
  members(): FleetMemberStatus[] {
    const others: FleetMemberStatus[] = [
      ...[...this.#peers].map(([hub, p]): FleetMemberStatus => ({ hub, state: 'connected', since: p.since, panels: p.panels })),
      ...[...this.#lost].map(([hub, l]): FleetMemberStatus => ({ hub, state: 'unreachable', since: l.since, problem: l.problem })),
    ].sort((a, b) => a.hub.localeCompare(b.hub));
    const problem = this.#link.problem;
    const self: FleetMemberStatus = {
      hub: this.#link.name,
      state: this.#link.connected ? 'self' : 'unreachable',
      since: this.#since,
      panels: this.#ownPanels(),
      ...(problem ? { problem } : {}),
    };
    return [self, ...others];
  }

  #beat(): void {
    this.announce();
    const stale = Date.now() - 3 * this.#heartbeatMs;
    for (const [hub, p] of this.#peers)
      if (p.seen < stale) this.#gone(hub, `hub ${hub} has not been heard from for ${Math.round((Date.now() - p.seen) / 1000)} s`);
  }

  #gone(hub: string, why: string): void {
    if (!this.#peers.delete(hub)) return;
    this.#lost.set(hub, { since: Date.now(), problem: why });
    this.#events.gone(hub, why);
    this.#holdPanels();
    this.#events.changed();
  }

  /** Operator panels attached here, not counting the hold that stands for other hubs' panels. */
  #ownPanels(): number {
    return Math.max(0, this.#core.panelsAttached() - (this.#panelHold ? 1 : 0));
  }

  /**
   * While some other hub has an operator panel attached, this hub counts as watched: its mutating
   * calls ask (the prompt shows on that panel too) instead of being denied for want of an operator.
   */
  #holdPanels(): void {
    const watched = [...this.#peers.values()].some((p) => p.panels > 0);
    if (watched && !this.#panelHold) this.#panelHold = this.#core.attachPanel();
    else if (!watched && this.#panelHold) {
      this.#panelHold();
      this.#panelHold = undefined;
    }
  }
}

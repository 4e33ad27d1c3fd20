/**
 * Pure permission decisions for the tmux driver: tiers, key classes, grants and read-denies.
 * Everything here is a function of a pane's marks, the config and what the driver remembers; no
 * I/O. Grants come only from humans (pane option `@uplink_profile`, config `write_allow`, the
 * panel through `setTier`), and a rename by an agent can never raise a tier or lift a deny.
 */
import { DriverError } from '../contract';
import { globMatch } from '../glob';
import { readDenies, writeGrants, type TmuxConfig } from './config';

/** Per-pane permission tiers; each includes the ones before it. */
export type Tier = 'observer' | 'operator' | 'godmode';
export const TIERS: readonly Tier[] = ['observer', 'operator', 'godmode'];

/** Exact lowercase names only: an unrecognised value never grants. */
export function parseTier(value: string | undefined): Tier | undefined {
  return TIERS.find((t) => t === value);
}

export function tierRank(tier: Tier): number {
  return TIERS.indexOf(tier);
}

export type KeyClass = 'benign' | 'dangerous';

const BENIGN_KEYS = new Set([
  'Enter',
  'Escape',
  'Tab',
  'Space',
  'BSpace',
  'Up',
  'Down',
  'Left',
  'Right',
  'PageUp',
  'PageDown',
  'PPage',
  'NPage',
  'Home',
  'End',
]);

/**
 * Benign = navigation and submit; dangerous = any control/meta chord (`C-c` kills, `C-d` hangs
 * up). Anything else is refused: literal text belongs in `type`, and an unknown key name must
 * never slip through as one.
 */
export function classifyKey(key: string): KeyClass {
  if (BENIGN_KEYS.has(key)) return 'benign';
  if (isChord(key)) return 'dangerous';
  throw new DriverError('Invalid', `unknown key "${key}": keys takes special keys only`, {
    hint: 'use Enter, Escape, Tab, Space, BSpace, Up, Down, Left, Right, PageUp, PageDown, Home, End or a C-/M- chord; send literal text with the type op',
  });
}

/** Key names a chord may modify besides one character (tmux's names, exact case). */
const CHORD_KEYS = new Set([...BENIGN_KEYS, 'BTab', 'IC', 'Insert', 'DC', 'Delete', ...Array.from({ length: 12 }, (_, i) => `F${i + 1}`)]);

/**
 * A `C-`/`M-` chord (modifiers `C-`, `M-`, `S-` in any order, at least one `C-` or `M-`) or a
 * `^x` control key, on one character or a key name. tmux types a string it cannot parse as a
 * key literally, so `C-rm -rf` is no chord: it must not pass as one.
 */
function isChord(key: string): boolean {
  if (key.startsWith('^')) return [...key].length === 2 && key !== '^ ';
  const match = /^((?:[CMS]-)+)(.+)$/.exec(key);
  if (!match || !/[CM]-/.test(match[1]!)) return false;
  const base = match[2]!;
  return CHORD_KEYS.has(base) || ([...base].length === 1 && !/\s/.test(base) && !hasControlChars(base));
}

/** A pane's human-set grant state as read from its options. */
export interface PaneMarks {
  id: string;
  label?: string;
  /** Raw `@uplink_profile` (may be junk: junk pins observer). */
  profile?: string;
  /** `@uplink_read off`. */
  readOff: boolean;
  /** `@uplink_agent_label`: the last label an agent set through the `label` op. */
  agentLabel?: string;
  /** `@uplink_first_label`: the label the pane had before an agent first renamed it. */
  firstLabel?: string;
  /** The driver could not parse the pane's fields; fail closed (observer, unreadable). */
  malformed?: boolean;
}

export type TierSource = 'pane option' | 'config' | 'default';

/** What the driver may do with a pane right now. */
export interface PaneDecision {
  tier: Tier;
  source: TierSource;
  /** Why content ops are refused, when they are. */
  readBlock?: string;
}

/**
 * The label that may grant: the current label unless an agent set it through `label`, in which
 * case the label a human gave the pane before that (if any).
 */
export function grantLabel(marks: PaneMarks): string | undefined {
  if (marks.agentLabel && marks.label === marks.agentLabel) return marks.firstLabel || undefined;
  return marks.label || undefined;
}

/** Highest tier a config `write_allow` glob grants for these names (observer if none). */
export function configTier(names: Array<string | undefined>, cfg: TmuxConfig | undefined): Tier {
  let best: Tier = 'observer';
  for (const grant of writeGrants(cfg)) {
    if (names.some((n) => n !== undefined && globMatch(grant.pattern, n)) && tierRank(grant.tier) > tierRank(best)) best = grant.tier;
  }
  return best;
}

/**
 * Decides a pane's tier and read block. The pane option decides alone when present (an explicit
 * observer pins down; junk pins observer); config globs fill in otherwise, matched against the
 * pane id and the human-given label. Read denies match the id, the current label and every label
 * the pane was ever seen with (`seenLabels`), so a rename cannot escape one.
 */
export function decide(marks: PaneMarks, cfg: TmuxConfig | undefined, seenLabels: Iterable<string> = []): PaneDecision {
  if (marks.malformed) return { tier: 'observer', source: 'default', readBlock: 'its tmux options could not be parsed (failing closed)' };
  let tier: Tier;
  let source: TierSource;
  if (marks.profile) {
    tier = parseTier(marks.profile) ?? 'observer';
    source = 'pane option';
  } else {
    tier = configTier([marks.id, grantLabel(marks)], cfg);
    source = tier === 'observer' ? 'default' : 'config';
  }
  const decision: PaneDecision = { tier, source };
  if (marks.readOff) decision.readBlock = 'its pane option @uplink_read is off';
  else {
    const names = new Set([marks.id, ...seenLabels]);
    for (const n of [marks.label, marks.firstLabel, marks.agentLabel]) if (n) names.add(n);
    const pattern = readDenies(cfg).find((p) => [...names].some((n) => globMatch(p, n)));
    if (pattern !== undefined) decision.readBlock = `config tmux.read_deny "${pattern}" matches it`;
  }
  return decision;
}

/**
 * Who to ask for a tier, for error hints. The agent reading it is the one refused: it is told to
 * ask, never how a grant is made (a pane option or a config entry is a recipe it could type into
 * another pane it may write to).
 */
export function grantHint(needed: Tier): string {
  return `ask the operator to grant ${needed} on this pane in the Uplink panel`;
}

/** A pane as errors and previews name it: `%3 (codex)`. */
export function paneName(marks: Pick<PaneMarks, 'id' | 'label'>): string {
  return marks.label ? `${marks.id} (${marks.label})` : marks.id;
}

/** `Rejected` unless the pane's tier covers `needed`; the error names both tiers and the remedy. */
export function requireTier(decision: PaneDecision, needed: Tier, what: string, marks: PaneMarks): void {
  if (tierRank(decision.tier) >= tierRank(needed)) return;
  throw new DriverError('Rejected', `${what} needs tier ${needed}; pane ${paneName(marks)} is ${decision.tier} (from ${decision.source})`, {
    hint: grantHint(needed),
  });
}

/** `Rejected` when the pane's content may not be touched. */
export function requireReadable(decision: PaneDecision, what: string, marks: PaneMarks): void {
  if (!decision.readBlock) return;
  throw new DriverError('Rejected', `${what} refused: pane ${paneName(marks)} is read-blocked (${decision.readBlock})`, {
    hint: 'only the operator can lift a read block; ask them if this pane should be readable',
  });
}

/** Single-line text: no control characters (newline, tab, escape, …). */
export function hasControlChars(text: string): boolean {
  // eslint-disable-next-line no-control-regex
  return /[\u0000-\u001f\u007f-\u009f]/.test(text);
}

/**
 * The `tmux` section of the user config file: which server to use, which panes a human granted
 * write access to, and which panes no tier may read. The hub loads and watches the file; the
 * driver receives this section through a live getter, so edits apply on the next decision.
 */
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import type { Tier } from './policy';

/** The tiers a write grant may give (observer is what every pane has without one). */
const WRITE_TIERS = ['operator', 'godmode'] as const satisfies ReadonlyArray<Exclude<Tier, 'observer'>>;

/** JSON Schema (Draft 2020-12) of the `tmux` config section; `TmuxConfig` is derived from it. */
export const tmuxConfigSchema = Type.Object(
  {
    /** Path of the tmux server socket; default: `$TMUX`'s first field, else tmux's default socket. */
    socket: Type.Optional(
      Type.String({ minLength: 1, description: 'Path of the tmux server socket (default: the server named by $TMUX, else the default socket).' }),
    ),
    write_allow: Type.Optional(
      Type.Array(
        /** One write grant: a glob on a pane's label or `%id`, and the tier it grants. */
        Type.Object(
          { pattern: Type.String({ minLength: 1 }), tier: Type.Unsafe<(typeof WRITE_TIERS)[number]>({ enum: [...WRITE_TIERS] }) },
          { additionalProperties: false },
        ),
        { description: 'Write grants: a glob (`*`, `?`) on a pane label or %id, and the tier it grants. A pane option @uplink_profile wins when present.' },
      ),
    ),
    /** Globs on a pane's label or `%id` that no tier may read (sticky: renaming cannot lift it). */
    read_deny: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'Globs on a pane label or %id whose content no tier may read.' })),
  },
  {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://uplink.local/schemas/config-tmux.json',
    title: 'tmux driver settings',
    additionalProperties: false,
  },
);

/** The `tmux` config section (all optional). */
export type TmuxConfig = Static<typeof tmuxConfigSchema>;
/** One write grant: a glob on a pane's label or `%id`, and the tier it grants. */
export type TmuxWriteGrant = NonNullable<TmuxConfig['write_allow']>[number];

/**
 * Problems with a config section, one sentence each (empty when it is fine). Drives `doctor`;
 * the policy itself ignores malformed entries rather than guessing (fail closed: a bad grant
 * grants nothing, a bad deny pattern is still matched literally).
 */
export function configProblems(raw: unknown): string[] {
  if (raw === undefined || raw === null) return [];
  if (typeof raw !== 'object' || Array.isArray(raw)) return ['config tmux: must be an object'];
  const problems: string[] = [];
  const cfg = raw as Record<string, unknown>;
  const settings = Object.keys(tmuxConfigSchema.properties);
  for (const key of Object.keys(cfg)) {
    if (!settings.includes(key)) problems.push(`config tmux.${key}: unknown setting (allowed: ${settings.join(', ')})`);
  }
  if (cfg.socket !== undefined && (typeof cfg.socket !== 'string' || cfg.socket === '')) {
    problems.push('config tmux.socket: must be a non-empty path');
  }
  if (cfg.write_allow !== undefined) {
    if (!Array.isArray(cfg.write_allow)) problems.push('config tmux.write_allow: must be a list of {pattern, tier}');
    else
      cfg.write_allow.forEach((g: unknown, i) => {
        const grant = g as { pattern?: unknown; tier?: unknown } | null;
        if (!grant || typeof grant !== 'object') problems.push(`config tmux.write_allow[${i}]: must be {pattern, tier}`);
        else if (typeof grant.pattern !== 'string' || grant.pattern === '') problems.push(`config tmux.write_allow[${i}].pattern: must be a non-empty glob`);
        else if (grant.tier !== 'operator' && grant.tier !== 'godmode')
          problems.push(`config tmux.write_allow[${i}].tier: must be "operator" or "godmode" (this entry grants nothing)`);
      });
  }
  if (cfg.read_deny !== undefined) {
    if (!Array.isArray(cfg.read_deny)) problems.push('config tmux.read_deny: must be a list of globs');
    else
      cfg.read_deny.forEach((p: unknown, i) => {
        if (typeof p !== 'string' || p === '') problems.push(`config tmux.read_deny[${i}]: must be a non-empty glob`);
      });
  }
  return problems;
}

/** The usable grants of a config (malformed entries dropped: they grant nothing). */
export function writeGrants(cfg: TmuxConfig | undefined): TmuxWriteGrant[] {
  const list = Array.isArray(cfg?.write_allow) ? cfg.write_allow : [];
  return list.filter((g) => g && typeof g.pattern === 'string' && g.pattern !== '' && (g.tier === 'operator' || g.tier === 'godmode'));
}

/** The read-deny globs of a config (non-strings dropped). */
export function readDenies(cfg: TmuxConfig | undefined): string[] {
  const list = Array.isArray(cfg?.read_deny) ? cfg.read_deny : [];
  return list.filter((p): p is string => typeof p === 'string' && p !== '');
}

/**
 * The `desktop` section of Uplink's config file. The hub validates the file with this schema and
 * hands the driver a live getter, so edits apply without a restart.
 */
import type { JsonSchema } from '../../kernel';

/** The desktop driver's config section. */
export interface DesktopConfig {
  /** Deadline of one helper call (default 15000 ms). */
  call_timeout_ms?: number;
  /** Windows whose title or class matches one of these globs (`*`, `?`) are not offered as channels. */
  read_deny?: string[];
  /** Width of the screenshot in approval prompts (default 960 px). */
  preview_max_width?: number;
  /** Python interpreter with python3-gi and python3-xlib (default /usr/bin/python3, else python3). */
  python?: string;
}

/** JSON Schema (Draft 2020-12) of the `desktop` section. */
export const desktopConfigSchema: JsonSchema = {
  type: 'object',
  properties: {
    call_timeout_ms: { type: 'integer', minimum: 100, maximum: 600_000 },
    read_deny: { type: 'array', items: { type: 'string', minLength: 1 } },
    preview_max_width: { type: 'integer', minimum: 64, maximum: 8192 },
    python: { type: 'string', minLength: 1 },
  },
  additionalProperties: false,
};

export const DEFAULT_CALL_TIMEOUT_MS = 15_000;
export const DEFAULT_PREVIEW_MAX_WIDTH = 960;

/**
 * The `desktop` section of Uplink's config file. The hub validates the file with this schema and
 * hands the driver a live getter, so edits apply without a restart.
 */
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';

/** JSON Schema (Draft 2020-12) of the `desktop` section; `DesktopConfig` is derived from it. */
export const desktopConfigSchema = Type.Object(
  {
    /** Deadline of one helper call (default 15000 ms). */
    call_timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 600_000 })),
    /** Windows whose title or class matches one of these globs (`*`, `?`) are not offered as channels. */
    read_deny: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    /** Width of the screenshot in approval prompts (default 960 px). */
    preview_max_width: Type.Optional(Type.Integer({ minimum: 64, maximum: 8192 })),
    /** Python interpreter with python3-gi and python3-xlib (default /usr/bin/python3, else python3). */
    python: Type.Optional(Type.String({ minLength: 1 })),
    /**
     * Which native helper serves the driver: `linux` (Python, AT-SPI + X11) or `win32` (the native
     * Win32 helper; on Linux it runs under Wine). Default: the platform's own.
     */
    backend: Type.Optional(Type.Union([Type.Literal('linux'), Type.Literal('win32')])),
  },
  { additionalProperties: false },
);

/** The desktop driver's config section. */
export type DesktopConfig = Static<typeof desktopConfigSchema>;

export const DEFAULT_CALL_TIMEOUT_MS = 15_000;
export const DEFAULT_PREVIEW_MAX_WIDTH = 960;

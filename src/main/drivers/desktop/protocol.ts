/**
 * The desktop helper protocol: JSON lines over the helper's stdin/stdout, one call at a time.
 * Requests carry a driver op (or a helper-only op), the channel's binding as `target`, the op's
 * args and the selected interaction kind; replies carry the op's result or a DriverError payload. Nothing here is
 * X11-specific: window ids are opaque strings, and the Win32 helper (HWND + MSAA) answers the same lines.
 * Written down for both helpers in docs/desktop-helper-protocol.md.
 */
import type { JsonValue } from '../../kernel';
import type { DriverErrorWire } from '../contract';

/** The protocol version the helper announces in `hello`. */
export const HELPER_PROTOCOL = 1;

/** What a channel is bound to: the window, its process and that process's start time. */
export interface HelperTarget {
  window: string;
  pid: number;
  /** Clock ticks since boot (`/proc/<pid>/stat` field 22 on Linux); `null` when unknown. */
  start_time: number | null;
  /** The process's image path, where the helper reports one (Win32); re-checked before every op. */
  image?: string;
}

/** Ops only the driver sends (not agent-facing). */
export type HelperOnlyOp = 'hello' | 'doctor' | 'windows' | 'interactions' | 'element' | 'process';

/** One request line. */
export interface HelperRequest {
  id: number;
  op: string;
  target?: HelperTarget;
  args?: JsonValue;
  interaction?: 'semantic_ui' | 'visual_ui';
}

/** One reply line. */
export type HelperReply = { id: number; ok: true; result: JsonValue } | { id: number | null; ok: false; error: DriverErrorWire };

/** A window as the helper's `windows` op reports it. */
export interface HelperWindow {
  window: string;
  title: string;
  class: string[];
  geometry: { x: number; y: number; width: number; height: number };
  /** The client-set `_NET_WM_PID` (or the platform's equivalent). */
  net_wm_pid: number | null;
  /** The display server's view of the owning process (X-Resource), when it has one. */
  xres_pid: number | null;
  pid: number | null;
  start_time: number | null;
  /** The process's image path (Win32 helper); absent where the platform binds by start time alone. */
  image?: string | null;
  process_name: string;
  focused: boolean;
  interactions: Array<'semantic_ui' | 'visual_ui'>;
}

/** The helper's `windows` result. */
export interface HelperWindows {
  windows: HelperWindow[];
  /**
   * An opaque name of the window-id namespace (one display-server run: X server pid + start
   * time); `null` when the helper cannot tell (remote display, Wayland). Bindings persist per session.
   */
  session?: string | null;
}

/** The helper's `doctor` result. */
export interface HelperDoctor {
  ok: boolean;
  lines: string[];
}

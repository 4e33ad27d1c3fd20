/** How the hub (or the conformance kit) runs one external driver. */
import type { Integrity } from './admission';
import type { SchemaCheck } from './answers';

/** The options of an `ExternalDriver`. */
export interface ExternalDriverOptions {
  /** The id the operator gave the driver; the driver's `info.id` must equal it. */
  id: string;
  /** How the driver's answers are checked against their schemas: the hub passes the kernel's validator. */
  check: SchemaCheck;
  /** argv vector, never a shell line. */
  command: string[];
  /** The working directory (the data dir). */
  cwd: string;
  /**
   * Read before every start. Without this option nothing is checked (the conformance kit runs a
   * command the person typed); with it, `undefined` means the operator has not trusted the driver.
   */
  integrity?: () => Integrity | undefined;
  /**
   * With `integrity`: the hub's private directory where each start copies the bytes it hashed and
   * runs them from (docs/driver-protocol.md, Admission). Required with `integrity`.
   */
  admittedDir?: string;
  /** Told after each admission that lets a start go ahead, before the process is spawned. */
  onAdmitted?: (integrity: Integrity) => void;
  uplinkVersion?: string;
  /** Bound of the handshake and of calls that bring no deadline of their own (default 15 s). */
  callTimeoutMs?: number;
  /** First restart delay after a crash, doubled per crash in a row up to 30 s (default 500 ms). */
  backoffMs?: number;
  /** How long a stopping driver gets after its stdin closes, and after SIGTERM (default 2 s). */
  stopGraceMs?: number;
  env?: NodeJS.ProcessEnv;
  /**
   * While it runs, ask the driver `info` every `intervalMs`; one left unanswered for `timeoutMs`
   * makes it `not_responding`, and calls fail at once until it answers. Off without this option
   * (the conformance kit judges a driver by its own calls).
   */
  ping?: { intervalMs: number; timeoutMs: number };
  /**
   * Take the driver's own `info.id` at the handshake instead of requiring `id`: the conformance
   * kit runs a command with no config to name it.
   */
  adoptId?: boolean;
}

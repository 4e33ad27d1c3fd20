/**
 * An out-of-process driver as the hub reports it to the operator (the panel's Drivers view,
 * `uplink drivers`): declared once, for the host that fills it in and the panel that shows it.
 */

export type DriverProcessState = 'idle' | 'starting' | 'running' | 'backoff' | 'refused' | 'incompatible' | 'stopped';
/** `unchecked`: not hashed yet (an admitted driver before its first start), or no integrity option (the conformance kit). */
export type DriverAdmission = 'admitted' | 'untrusted' | 'mismatch' | 'unchecked';

export interface DriverProcessStatus {
  id: string;
  command: string[];
  state: DriverProcessState;
  pid?: number;
  protocol_version?: string;
  extensions: string[];
  restarts: number;
  started_at?: number;
  next_start_at?: number;
  last_exit?: { at: number; code: number | null; signal: string | null; reason: string };
  admission: DriverAdmission;
  /** The file hashed at the last admission check, what the config admits, and what it has now. */
  integrity: { file?: string; expected?: string; actual?: string };
  /** Why the driver is not usable now, one line with its hint. */
  error?: string;
  in_flight: number;
  stderr: string[];
}

/** One protocol message between the hub and an external driver (payloads masked and cut). */
export interface DriverTraceEntry {
  seq: number;
  at: number;
  dir: 'out' | 'in';
  type: 'request' | 'response' | 'error' | 'notification' | 'invalid';
  method?: string;
  id?: number | string;
  bytes: number;
  /** For an answer: milliseconds since its request. */
  ms?: number;
  summary: string;
}

/**
 * An out-of-process driver as the hub reports it to the operator (the panel's Drivers view,
 * `uplink drivers`): declared once, for the host that fills it in and the panel that shows it.
 */
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { StringEnum } from './schema';

/**
 * `off`: configured in `external_drivers` but left out by `hub.drivers`, so never started.
 * `not_responding`: its process runs but left the hub's ping unanswered (stopped, or stuck); calls
 * fail at once until it answers again. `stopping`: a restart is ending the old process.
 */
export const DriverProcessState = StringEnum([
  'idle',
  'starting',
  'running',
  'not_responding',
  'stopping',
  'backoff',
  'refused',
  'incompatible',
  'stopped',
  'off',
]);
export type DriverProcessState = Static<typeof DriverProcessState>;
/** `unchecked`: not hashed yet (an admitted driver before its first start), or no integrity option (the conformance kit). */
export const DriverAdmission = StringEnum(['admitted', 'untrusted', 'mismatch', 'unchecked']);
export type DriverAdmission = Static<typeof DriverAdmission>;

const str = Type.Optional(Type.String());

export const DriverProcessStatus = Type.Object({
  id: Type.String(),
  command: Type.Array(Type.String()),
  state: DriverProcessState,
  pid: Type.Optional(Type.Integer()),
  protocol_version: str,
  extensions: Type.Array(Type.String()),
  restarts: Type.Integer(),
  started_at: Type.Optional(Type.Number()),
  next_start_at: Type.Optional(Type.Number()),
  last_exit: Type.Optional(
    Type.Object({
      at: Type.Number(),
      code: Type.Union([Type.Integer(), Type.Null()]),
      signal: Type.Union([Type.String(), Type.Null()]),
      reason: Type.String(),
    }),
  ),
  admission: DriverAdmission,
  /**
   * Who admitted what an `admitted` driver runs: the operator's trust (panel, `uplink drivers
   * trust`), or an `integrity` written into config.json by hand (recorded in the audit as such).
   */
  admitted_by: Type.Optional(StringEnum(['operator', 'config'])),
  /** The file hashed at the last admission check, what the config admits, and what it has now. */
  integrity: Type.Object({ file: str, expected: str, actual: str }),
  /** Why the driver is not usable now, one line with its hint. */
  error: str,
  in_flight: Type.Integer(),
  /** The last request the driver answered (a ping or a call), and when: what a not-responding driver last did. */
  last_answer: Type.Optional(Type.Object({ method: Type.String(), at: Type.Number() })),
  /** Since when a `not_responding` driver has left the ping unanswered. */
  not_responding_since: Type.Optional(Type.Number()),
  stderr: Type.Array(Type.String()),
});
export type DriverProcessStatus = Static<typeof DriverProcessStatus>;

/** The admission in words, for the panel and `uplink drivers` alike: who admitted an admitted driver, else the verdict. */
export function describeAdmission(d: Pick<DriverProcessStatus, 'admission' | 'admitted_by'>): string {
  if (d.admission !== 'admitted' || !d.admitted_by) return d.admission;
  return d.admitted_by === 'config' ? 'admitted by config' : 'admitted by the operator';
}

/** A state as the operator reads it (`not responding`, not `not_responding`). */
export function stateInWords(state: DriverProcessState): string {
  return state.replace(/_/g, ' ');
}

/**
 * One protocol message between the hub and an external driver (payloads masked and cut). An
 * `unanswered` entry is no message: the hub's mark that the request with its `id` got no answer
 * by its deadline (`ms`).
 */
export const DriverTraceEntry = Type.Object({
  seq: Type.Integer(),
  at: Type.Number(),
  dir: StringEnum(['out', 'in']),
  type: StringEnum(['request', 'response', 'error', 'notification', 'invalid', 'unanswered']),
  method: str,
  id: Type.Optional(Type.Union([Type.Integer(), Type.String()])),
  bytes: Type.Integer(),
  /** For an answer: milliseconds since its request. */
  ms: Type.Optional(Type.Number()),
  summary: Type.String(),
});
export type DriverTraceEntry = Static<typeof DriverTraceEntry>;

/**
 * The one place a PanelApi call is executed, for both transports: validate the payload against
 * the channel map, run the handler, and turn any failure into a `PanelErrorWire` the renderer
 * shows. Nothing thrown here escapes to crash the hub.
 */
import type { PanelErrorWire, PanelHandlers } from '../../../shared/panel-api';
import { DriverError } from '../../hub';
import { checkRequest } from './validate';
import { renderError } from './errors';

/** A call's outcome as it goes back over the wire. */
export type CallOutcome = { ok: true; result: unknown } | { ok: false; error: PanelErrorWire };

const codeOf = (error: unknown): PanelErrorWire['code'] => {
  if (!(error instanceof DriverError)) return 'failed';
  switch (error.kind) {
    case 'NotFound':
      return 'not_found';
    case 'Invalid':
      return 'invalid_request';
    case 'Unavailable':
      return 'unavailable';
    case 'Rejected':
    case 'Timeout':
    case 'Upstream':
      return 'failed';
    default: {
      const never: never = error.kind;
      return never;
    }
  }
};

/** Validates and runs one call. */
export async function dispatchCall(handlers: PanelHandlers, method: unknown, params: unknown): Promise<CallOutcome> {
  const checked = checkRequest(method, params);
  if (!checked.ok) return { ok: false, error: { code: 'invalid_request', message: checked.message } };
  const { method: m, params: p } = checked.value;
  try {
    const handler = handlers[m] as (req: unknown) => Promise<unknown>;
    return { ok: true, result: await handler(p) };
  } catch (error) {
    const channel = p && typeof p === 'object' && 'channel' in p ? String((p as { channel: unknown }).channel) : undefined;
    return { ok: false, error: { code: codeOf(error), message: renderError(channel, error) } };
  }
}

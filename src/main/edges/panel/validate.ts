/**
 * Validation of PanelApi payloads on receipt in main (IPC and WebSocket alike). Schemas come from
 * the shared channel map and are compiled once, with the edges' validator (`../schema`).
 */
import type { ValidateFunction } from 'ajv';
import type { PanelEventName, PanelMethod } from '../../../shared/panel-api';
import { PANEL_CALLS, PANEL_EVENTS, isPanelMethod } from '../../../shared/panel-channels';
import { compileSchema, describeSchemaError } from '../schema';
import { clipName } from '../../../shared/escape';

const requests = new Map<PanelMethod, ValidateFunction>();
const responses = new Map<PanelMethod, ValidateFunction>();
const events = new Map<PanelEventName, ValidateFunction>();
for (const [method, { request, response }] of Object.entries(PANEL_CALLS)) {
  requests.set(method as PanelMethod, compileSchema(request));
  responses.set(method as PanelMethod, compileSchema(response));
}
for (const [event, schema] of Object.entries(PANEL_EVENTS)) events.set(event as PanelEventName, compileSchema(schema));

/** The outcome of a check: the value, or an operator-readable message. */
export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

/** Checks a method name and its params; `undefined`/`null` params mean `{}`. */
export function checkRequest(method: unknown, params: unknown): Checked<{ method: PanelMethod; params: unknown }> {
  if (!isPanelMethod(method)) {
    return {
      ok: false,
      message: `unknown panel method ${JSON.stringify(clipName(method))} — hint: the panel and hub versions differ; reload the panel`,
    };
  }
  const value = params ?? {};
  const validate = requests.get(method)!;
  if (!validate(value))
    return { ok: false, message: `invalid params for ${method}: ${describeSchemaError(validate.errors)} — hint: see PANEL_CALLS.${method}.request` };
  return { ok: true, value: { method, params: value } };
}

/** Checks a response (tests use this to prove the hub's payloads match the contract). */
export function checkResponse(method: PanelMethod, value: unknown): Checked<unknown> {
  const validate = responses.get(method)!;
  return validate(value) ? { ok: true, value } : { ok: false, message: `${method} response: ${describeSchemaError(validate.errors)}` };
}

/** Checks an event payload against its schema. */
export function checkEvent(event: PanelEventName, value: unknown): Checked<unknown> {
  const validate = events.get(event)!;
  return validate(value) ? { ok: true, value } : { ok: false, message: `${event} payload: ${describeSchemaError(validate.errors)}` };
}

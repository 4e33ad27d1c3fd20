/**
 * Validation of PanelApi payloads on receipt in main (IPC and WebSocket alike). Schemas come from
 * the shared channel map and are compiled once. Errors name the JSON pointer and keyword only,
 * never the offending value (it may be a secret pasted into the wrong field).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { PanelEventName, PanelMethod } from '../../../shared/panel-api';
import { PANEL_CALLS, PANEL_EVENTS, isPanelMethod } from '../../../shared/panel-channels';

const ajv = new Ajv2020({ allErrors: false, strict: false });
const requests = new Map<PanelMethod, ValidateFunction>();
const responses = new Map<PanelMethod, ValidateFunction>();
const events = new Map<PanelEventName, ValidateFunction>();
for (const [method, { request, response }] of Object.entries(PANEL_CALLS)) {
  requests.set(method as PanelMethod, ajv.compile(request));
  responses.set(method as PanelMethod, ajv.compile(response));
}
for (const [event, schema] of Object.entries(PANEL_EVENTS)) events.set(event as PanelEventName, ajv.compile(schema));

/** The outcome of a check: the value, or an operator-readable message. */
export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

const describe = (errors: ErrorObject[] | null | undefined): string => {
  const e = errors?.[0];
  if (!e) return 'invalid payload';
  return `${e.instancePath || '/'} fails ${e.keyword}${e.keyword === 'additionalProperties' ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)})` : ''}`;
};

/** Checks a method name and its params; `undefined`/`null` params mean `{}`. */
export function checkRequest(method: unknown, params: unknown): Checked<{ method: PanelMethod; params: unknown }> {
  if (!isPanelMethod(method)) {
    return { ok: false, message: `unknown panel method ${JSON.stringify(String(method)).slice(0, 80)} — hint: the panel and hub versions differ; reload the panel` };
  }
  const value = params ?? {};
  const validate = requests.get(method)!;
  if (!validate(value)) return { ok: false, message: `invalid params for ${method}: ${describe(validate.errors)} — hint: see PANEL_CALLS.${method}.request` };
  return { ok: true, value: { method, params: value } };
}

/** Checks a response (tests use this to prove the hub's payloads match the contract). */
export function checkResponse(method: PanelMethod, value: unknown): Checked<unknown> {
  const validate = responses.get(method)!;
  return validate(value) ? { ok: true, value } : { ok: false, message: `${method} response ${describe(validate.errors)}` };
}

/** Checks an event payload against its schema. */
export function checkEvent(event: PanelEventName, value: unknown): Checked<unknown> {
  const validate = events.get(event)!;
  return validate(value) ? { ok: true, value } : { ok: false, message: `${event} payload ${describe(validate.errors)}` };
}

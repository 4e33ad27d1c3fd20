/**
 * Judging what a provider hands back: a result must be `{output}` with plain-JSON output that
 * passes the canonical output_schema; progress reports must be well-formed. Failures get a fixed
 * agent-facing error plus operator-only detail.
 */
import { PROVIDER_BAD_RESULT, clip } from './errors';
import type { SoftwareUseError } from './errors';
import { NOT_JSON, jsonCopy } from './json';
import { firstSchemaError, outputSchemaError } from './messages';
import type { SpecEntry } from './registry';
import type { DiagnosticKind, JsonValue, ProgressDetail, SoftwareUseErrorWire } from './types';

/** The outcome of a provider's resolved value. */
/** The outcome of a provider's resolved value; `cause` is the kernel's own error, for the host. */
export type Verdict =
  { ok: true; output: JsonValue } | { ok: false; error: SoftwareUseErrorWire; cause?: SoftwareUseError; kind: DiagnosticKind; detail: string };

/** Checks a provider's resolved value against the port contract and the spec's output_schema. */
export function judgeResult(result: unknown, spec: SpecEntry): Verdict {
  let output: unknown;
  let shaped = false;
  try {
    shaped = result !== null && typeof result === 'object' && 'output' in result;
    output = shaped ? (result as { output: unknown }).output : undefined;
  } catch {
    shaped = false; // a hostile getter or proxy
  }
  // Validate and keep a copy: a provider that later mutates its object (or hands over getters
  // or a proxy) cannot change what was checked, nor make validation throw.
  const copied = shaped ? jsonCopy(output) : NOT_JSON;
  if (copied === NOT_JSON) {
    return { ok: false, error: PROVIDER_BAD_RESULT, kind: 'provider_error', detail: 'provider resolved without a plain-JSON {output}' };
  }
  const validate = spec.validateOutput;
  if (!validate(copied)) {
    const e = firstSchemaError(validate.errors, spec.outputNames);
    const error = outputSchemaError(spec, e.pointer, e.keyword);
    return { ok: false, error: error.toWire(), cause: error, kind: 'output_schema', detail: `${e.raw || '/'} ${e.keyword}: ${e.message}` };
  }
  return { ok: true, output: copied };
}

/** A well-formed copy of a progress report, or undefined to ignore it. */
export function readProgress(value: unknown): ProgressDetail | undefined {
  try {
    if (value === null || typeof value !== 'object') return undefined;
    const { progress, total, message } = value as Record<string, unknown>;
    if (typeof progress !== 'number' || !Number.isFinite(progress)) return undefined;
    const detail: ProgressDetail = { progress };
    if (typeof total === 'number' && Number.isFinite(total)) detail.total = total;
    if (typeof message === 'string') detail.message = clip(message);
    return Object.freeze(detail); // shared by every copy of the event: replays must stay exact
  } catch {
    return undefined;
  }
}

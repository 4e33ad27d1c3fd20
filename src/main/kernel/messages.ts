/**
 * Agent-facing errors the runtime builds per request. They may name the capability, version,
 * requested range and a JSON pointer + schema keyword; never instance values or provider text.
 */
import { SoftwareUseError, clip } from './errors';
import type { SpecEntry } from './registry';
import type { SoftwareUseErrorWire } from './types';

const label = (spec: SpecEntry): string => `${spec.spec.id}@${spec.spec.version}`;

/**
 * The first schema failure as pointer and keyword; ajv's own message is for the operator only.
 * With `declared`, pointer segments that are neither array indices nor property names the schema
 * declares are masked as `*`: they are keys the instance made up (a provider's output keys can
 * be provider text), and `raw` keeps the full pointer for the operator.
 */
export function firstSchemaError(
  errors: ReadonlyArray<{ instancePath: string; keyword: string; message?: string }> | null | undefined,
  declared?: ReadonlySet<string>,
): { pointer: string; raw: string; keyword: string; message: string } {
  const first = errors?.[0];
  const raw = first?.instancePath ?? '';
  const pointer = declared === undefined ? raw : maskPointer(raw, declared);
  return { pointer: clip(pointer), raw, keyword: first?.keyword ?? 'unknown', message: first?.message ?? '' };
}

const INDEX = /^(?:0|[1-9][0-9]*)$/;

function maskPointer(pointer: string, declared: ReadonlySet<string>): string {
  if (pointer === '') return pointer;
  return pointer
    .split('/')
    .map((segment, i) => (i === 0 || INDEX.test(segment) || declared.has(segment.replace(/~1/g, '/').replace(/~0/g, '~')) ? segment : '*'))
    .join('/');
}

export function inputSchemaError(spec: SpecEntry, pointer: string, keyword: string): SoftwareUseError {
  return new SoftwareUseError(
    'input_schema_violation',
    `input does not match the input_schema of ${label(spec)} at JSON pointer "${pointer}" (keyword: ${keyword})`,
    { hint: `call discover and send input that follows the capability's input_schema` },
  );
}

export function outputSchemaError(spec: SpecEntry, pointer: string, keyword: string): SoftwareUseError {
  return new SoftwareUseError(
    'output_schema_violation',
    `the provider's output does not match the output_schema of ${label(spec)} at JSON pointer "${pointer}" (keyword: ${keyword}), so no result is reported`,
    { hint: 'the provider is at fault; tell the operator (detail in the operator log)' },
  );
}

export function duplicateError(id: string): SoftwareUseError {
  return new SoftwareUseError('duplicate_invocation', `invocation ${id} already exists`, { hint: 'use a fresh invocation_id for every start' });
}

export function notFoundError(id: string): SoftwareUseError {
  return new SoftwareUseError('invocation_not_found', `no retained invocation ${id}`, {
    hint: 'check the id; terminal invocations are evicted when the retention bound is reached',
  });
}

export function releaseActiveError(id: string): SoftwareUseError {
  return new SoftwareUseError('invalid_request', `invocation ${id} is still active and cannot be released`, {
    hint: 'wait for its terminal snapshot (or cancel it) first',
  });
}

export function exhaustedError(max: number): SoftwareUseError {
  return new SoftwareUseError('resource_exhausted', `all ${max} retained invocations are still active`, {
    hint: 'wait for some to finish or cancel them, then retry',
    retryable: true,
  });
}

export function disposedError(): SoftwareUseError {
  return new SoftwareUseError('internal', 'the runtime has been shut down and accepts no new work', { hint: 'restart Uplink (or create a new runtime)' });
}

export function unexpectedError(): SoftwareUseError {
  return new SoftwareUseError('internal', 'the runtime hit an unexpected failure', { hint: 'retry; if it persists, report it with the operator log' });
}

export function policyDenied(spec: SpecEntry, reason: string | undefined): SoftwareUseErrorWire {
  return new SoftwareUseError('policy_denied', `policy denied ${label(spec)}${reason ? `: ${reason}` : ''}`, {
    hint: 'ask the operator to allow it, or use a read-only capability',
  }).toWire();
}

export function policyFailed(spec: SpecEntry): SoftwareUseErrorWire {
  return new SoftwareUseError('policy_denied', `the policy could not decide on ${label(spec)}, so it fails closed`, {
    hint: 'the operator should check the policy (detail in the operator log)',
  }).toWire();
}

export function approvalDenied(spec: SpecEntry, reason: string | undefined): SoftwareUseErrorWire {
  return new SoftwareUseError('policy_denied', `the operator denied ${label(spec)}${reason ? `: ${reason}` : ''}`, {
    hint: 'change the request as the operator asked, or do without it',
  }).toWire();
}

export function approvalFailed(spec: SpecEntry): SoftwareUseErrorWire {
  return new SoftwareUseError('policy_denied', `no operator approval for ${label(spec)} (the approval failed, timed out or nobody answered)`, {
    hint: 'retry when an operator is present',
  }).toWire();
}

/**
 * Strict, hand-written shape checks for what agents send (requests, queries, cursors). They run
 * on every `start`, so they avoid allocation and fail with `invalid_request` messages that name
 * the field but never echo its value.
 */
import semver from 'semver';
import { SoftwareUseError } from './errors';
import { isValidIdentifier } from './identifier';
import { NOT_JSON, jsonCopy } from './json';
import type { CapabilityQuery, InteractionKind, InvocationConstraints, InvocationRequest } from './types';

const HINT_SHAPE = 'send {invocation_id, capability_id, version_requirement, input, constraints?} as in the sua-sdk contract';

function invalid(what: string, hint = HINT_SHAPE): SoftwareUseError {
  return new SoftwareUseError('invalid_request', what, { hint });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Whether `value` is one of the three interaction kinds. */
export function isInteractionKind(value: unknown): value is InteractionKind {
  return value === 'typed' || value === 'semantic_ui' || value === 'visual_ui';
}

// Parsing a range is the most expensive step of a start; agents reuse a handful of requirements.
const rangeCache = new Map<string, semver.Range | null>();
const RANGE_CACHE_LIMIT = 512;

/** The parsed semver range, or undefined when `text` is not a valid range. */
export function parseRange(text: string): semver.Range | undefined {
  let range = rangeCache.get(text);
  if (range === undefined) {
    try {
      range = new semver.Range(text);
    } catch {
      range = null;
    }
    if (rangeCache.size >= RANGE_CACHE_LIMIT) rangeCache.clear();
    rangeCache.set(text, range);
  }
  return range ?? undefined;
}

function checkRange(value: unknown, field: string): semver.Range {
  if (typeof value !== 'string' || value.length > 256) throw invalid(`${field} must be a semver range string`);
  const range = parseRange(value);
  if (range === undefined) throw invalid(`${field} is not a valid semver range`, 'use a range such as "^1", ">=1.2.0 <2" or "*"');
  return range;
}

function checkId(value: unknown, field: string): void {
  if (!isValidIdentifier(value)) {
    throw invalid(
      `${field} is not a valid identifier`,
      'use 1–128 lowercase letters, digits, ".", "/" or "-", starting with a letter and ending with a letter or digit',
    );
  }
}

function checkConstraints(value: unknown): InvocationConstraints {
  if (value === undefined) return {};
  if (!isPlainObject(value)) throw invalid('constraints must be an object');
  for (const key in value) {
    if (key !== 'provider_id' && key !== 'interaction') throw invalid(`constraints has an unknown field "${key.slice(0, 64)}"`);
  }
  const { provider_id: providerId, interaction } = value;
  if (providerId !== undefined) checkId(providerId, 'constraints.provider_id');
  if (interaction !== undefined && !isInteractionKind(interaction)) {
    throw invalid('constraints.interaction must be one of typed, semantic_ui, visual_ui');
  }
  // A fresh object of what was checked: later changes to the caller's object do not reach us.
  const out: InvocationConstraints = {};
  if (providerId !== undefined) out.provider_id = providerId as string;
  if (interaction !== undefined) out.interaction = interaction;
  return out;
}

/**
 * Runs a check; anything but a `SoftwareUseError` (a throwing getter, a proxy trap) means the
 * value is not the plain data the contract asks for, so it is `invalid_request` as well.
 */
function guarded<T>(check: () => T, what: string, hint?: string): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof SoftwareUseError) throw error;
    throw invalid(`${what} could not be read as plain data (a getter or proxy trap threw)`, hint);
  }
}

/**
 * Checks an `InvocationRequest` strictly (unknown fields are refused, like the SDK's serde) and
 * returns a copy: each field is read once, and the copy (not the caller's object) is what the
 * policy and the provider see, so the input validated here is the input the provider gets.
 */
export function checkRequest(value: unknown): CheckedRequest {
  return guarded(() => readRequest(value), 'the request');
}

function readRequest(value: unknown): CheckedRequest {
  if (!isPlainObject(value)) throw invalid('the request must be an object');
  for (const key in value) {
    switch (key) {
      case 'invocation_id':
      case 'capability_id':
      case 'version_requirement':
      case 'input':
      case 'constraints':
        break;
      default:
        throw invalid(`the request has an unknown field "${key.slice(0, 64)}"`);
    }
  }
  const { invocation_id: invocationId, capability_id: capabilityId, version_requirement: requirement } = value;
  checkId(invocationId, 'invocation_id');
  checkId(capabilityId, 'capability_id');
  const range = checkRange(requirement, 'version_requirement');
  const input = 'input' in value ? jsonCopy(value.input) : NOT_JSON;
  if (input === NOT_JSON) throw invalid('input must be present and plain JSON');
  const constraints = checkConstraints(value.constraints);
  return {
    request: { invocation_id: invocationId as string, capability_id: capabilityId as string, version_requirement: requirement as string, input, constraints },
    capabilityId: capabilityId as string,
    range,
    providerId: constraints.provider_id,
    interaction: constraints.interaction,
  };
}

/** What selection needs from a request or an explain query. */
export interface CheckedSelection {
  capabilityId: string;
  range: semver.Range;
  providerId: string | undefined;
  interaction: InteractionKind | undefined;
}

/** A request whose fields have been checked; `range` is the parsed version requirement. */
export interface CheckedRequest extends CheckedSelection {
  request: InvocationRequest;
}

/** Checks the selection part only (`explainSelection`). */
export function checkSelection(value: unknown): CheckedSelection {
  return guarded(() => readSelection(value), 'the selection query', 'send {capability_id, version_requirement, constraints?}');
}

function readSelection(value: unknown): CheckedSelection {
  if (!isPlainObject(value)) throw invalid('the selection query must be an object', 'send {capability_id, version_requirement, constraints?}');
  const capabilityId = value.capability_id; // each field is read once
  checkId(capabilityId, 'capability_id');
  const range = checkRange(value.version_requirement, 'version_requirement');
  const constraints = checkConstraints(value.constraints);
  return { capabilityId: capabilityId as string, range, providerId: constraints.provider_id, interaction: constraints.interaction };
}

/** A discovery query after checking; absent fields match everything. */
export interface CheckedQuery {
  capabilityId: string | undefined;
  range: semver.Range | undefined;
  providerId: string | undefined;
  interaction: InteractionKind | undefined;
}

/** Checks a `CapabilityQuery` strictly. */
export function checkQuery(value: CapabilityQuery | undefined): CheckedQuery {
  return guarded(() => readQuery(value), 'the discovery query', 'send {capability_id?, version_requirement?, provider_id?, interaction?}');
}

function readQuery(value: unknown): CheckedQuery {
  if (value === undefined) return { capabilityId: undefined, range: undefined, providerId: undefined, interaction: undefined };
  const hint = 'send {capability_id?, version_requirement?, provider_id?, interaction?}';
  if (!isPlainObject(value)) throw invalid('the discovery query must be an object', hint);
  for (const key in value) {
    if (key !== 'capability_id' && key !== 'version_requirement' && key !== 'provider_id' && key !== 'interaction') {
      throw invalid(`the discovery query has an unknown field "${key.slice(0, 64)}"`, hint);
    }
  }
  const { capability_id: capabilityId, version_requirement: requirement, provider_id: providerId, interaction } = value; // read once
  if (capabilityId !== undefined) checkId(capabilityId, 'capability_id');
  if (providerId !== undefined) checkId(providerId, 'provider_id');
  if (interaction !== undefined && !isInteractionKind(interaction)) throw invalid('interaction must be one of typed, semantic_ui, visual_ui', hint);
  return {
    capabilityId: capabilityId as string | undefined,
    range: requirement === undefined ? undefined : checkRange(requirement, 'version_requirement'),
    providerId: providerId as string | undefined,
    interaction,
  };
}

/** Checks an invocation id argument of `get`/`events`/`cancel`. */
export function checkInvocationId(value: unknown): string {
  checkId(value, 'invocation_id');
  return value as string;
}

/** Checks the exclusive event cursor (a non-negative safe integer). */
export function checkCursor(value: unknown): number {
  if (value === undefined) return 0;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw invalid('after must be a non-negative integer event sequence', 'pass the next_cursor of the previous page, or omit it to read from the start');
  }
  return value;
}

/**
 * Providers, canonical capability specs and the ordered offer list. Everything expensive
 * (schema compilation, sorting) happens once at `register`; selection is a short scan over the
 * offers of one capability id. One selection routine serves both `start` and `explainSelection`.
 */
import Ajv2020 from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import semver from 'semver';
import { SoftwareUseError, describeThrown } from './errors';
import { isValidIdentifier } from './identifier';
import { canonicalJson, frozenCopy, isJsonValue } from './json';
import type { CheckedSelection } from './request';
import { isInteractionKind } from './request';
import type {
  CapabilityOffer,
  CapabilityProvider,
  CapabilitySpec,
  InteractionKind,
  JsonSchema,
  OperationSafety,
  ProviderCapability,
  ProviderDescriptor,
  ProviderListing,
  SelectionCandidate,
} from './types';

/** A canonical spec with its validators, compiled once and shared by every provider offering it. */
export interface SpecEntry {
  spec: CapabilitySpec;
  version: semver.SemVer;
  /** Whether `version` satisfies a range, per parsed range (ranges are cached, so this stays small). */
  satisfies: WeakMap<semver.Range, boolean>;
  canonical: string;
  validateInput: ValidateFunction;
  validateOutput: ValidateFunction;
  /** Property names the output_schema declares; other keys in an output pointer are masked. */
  outputNames: ReadonlySet<string>;
}

/** One offer plus what the runtime needs to run it. */
export interface OfferEntry {
  offer: CapabilityOffer;
  provider: CapabilityProvider;
  spec: SpecEntry;
  rank: number;
}

interface ProviderEntry {
  listing: ProviderListing;
}

const RANK: Record<InteractionKind, number> = { typed: 0, semantic_ui: 1, visual_ui: 2 };

function registerError(what: string): SoftwareUseError {
  return new SoftwareUseError('invalid_request', `cannot register provider: ${what}`, {
    hint: `fix the provider's descriptor() or capabilities() so they follow the sua-sdk contract`,
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'boolean' || (isRecord(value) && isJsonValue(value));
}

function isSafety(value: unknown): value is OperationSafety {
  return value === 'read_only' || value === 'mutating';
}

/** A canonical semver version (`1.2.3`, not `v1.2.3` or `=1.2.3`). */
function isCanonicalVersion(value: unknown): value is string {
  return typeof value === 'string' && semver.valid(value) === value;
}

/** Discovery order: interaction preference, provider id, version (highest first), capability id. */
function compareOffers(a: OfferEntry, b: OfferEntry): number {
  if (a.rank !== b.rank) return a.rank - b.rank;
  const pa = a.offer.provider.id;
  const pb = b.offer.provider.id;
  if (pa !== pb) return pa < pb ? -1 : 1;
  const byVersion = semver.compare(b.spec.version, a.spec.version);
  if (byVersion !== 0) return byVersion;
  const ca = a.offer.capability.id;
  const cb = b.offer.capability.id;
  return ca === cb ? 0 : ca < cb ? -1 : 1;
}

// One ajv instance per process: building one compiles the Draft 2020-12 meta-schema (tens of
// milliseconds). Runtimes keep their own compiled validators and ajv forgets each schema right
// after compiling it, so sharing leaks nothing between runtimes. `format` is an annotation in
// 2020-12 (not asserted); unknown keywords are ignored as the draft says.
// Inputs get their own instance with `useDefaults`: the input a provider receives carries every
// default its schema states, so providers never restate them. (The runtime validates its own copy
// of the request's input, never the caller's object.) Outputs are checked, never changed.
type Which = 'input_schema' | 'output_schema';
const shared: Partial<Record<Which, Ajv2020>> = {};
const ajv = (which: Which): Ajv2020 =>
  (shared[which] ??= new Ajv2020({ strict: false, validateFormats: false, allErrors: false, useDefaults: which === 'input_schema' }));
// Validators are pure functions of their schema, so runtimes in one process (tests, a hub and its
// CLI) share them by canonical schema text instead of generating the same code again.
const compiled = new Map<string, ValidateFunction>();
const COMPILED_LIMIT = 512;

/**
 * The validator the runtime checks a capability's input with (Draft 2020-12, defaults applied to
 * the value it checks), for a caller that must check the same way outside a runtime.
 */
export function inputValidator(schema: JsonSchema): ValidateFunction {
  return compile(schema, 'input_schema');
}

/**
 * A validator that checks a value against `schema` and never changes it (no defaults filled in):
 * the runtime's own reading of Draft 2020-12, for the hub's other schemas (config, fleet
 * messages, driver protocol answers, what crosses the edges), so a process builds one ajv for
 * them all. Its first error in words: `describeSchemaError`.
 */
export function schemaValidator(schema: JsonSchema): ValidateFunction {
  return compile(schema, 'output_schema');
}

/** Longest pointer and property name a described error quotes: both may come from the value checked. */
const DESCRIBED_CHARS = 200;

// C0, DEL, C1 and the Unicode line separators: an error stays one line whatever a pointer holds.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/** `text` as one inert line: control characters escaped, cut to `max` characters. */
function inert(text: string, max: number): string {
  const line = text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

/**
 * The first error of a validator (`schemaValidator`, `inputValidator`) in one line, the same words
 * wherever Uplink checks a value against a schema: where (a JSON pointer, `/` for the whole
 * value), what in a short phrase, and the schema keyword, e.g. `/approvals/timeout_ms must be >=
 * 1000 (minimum)`. It quotes the schema (a limit, a pattern, the allowed values) and names a
 * property that is missing or not allowed, never a value: that may be a secret pasted into the
 * wrong field.
 */
export function describeSchemaError(errors: ReadonlyArray<ErrorObject> | null | undefined): string {
  const e = errors?.[0];
  if (!e) return '/ does not match its schema (unknown)';
  const where = inert(e.instancePath || '/', DESCRIBED_CHARS);
  const params = e.params as Record<string, unknown>;
  const quoted = (value: unknown): string => inert(JSON.stringify(value) ?? String(value), DESCRIBED_CHARS);
  let phrase: string;
  switch (e.keyword) {
    case 'required':
      phrase = `lacks the property ${quoted(params.missingProperty)}`;
      break;
    case 'additionalProperties':
      phrase = `has the property ${quoted(params.additionalProperty)}, which is not allowed`;
      break;
    case 'unevaluatedProperties':
      phrase = `has the property ${quoted(params.unevaluatedProperty)}, which is not allowed`;
      break;
    case 'enum': {
      const allowed = Array.isArray(params.allowedValues) ? params.allowedValues : [];
      phrase = `must be one of ${allowed.slice(0, 8).map(quoted).join(', ')}${allowed.length > 8 ? `, … (${allowed.length - 8} more)` : ''}`;
      break;
    }
    case 'const':
      phrase = `must be ${quoted(params.allowedValue)}`;
      break;
    default:
      phrase = inert(e.message ?? 'does not match its schema', DESCRIBED_CHARS);
  }
  return `${where} ${phrase} (${e.keyword})`;
}

let strictAjv: Ajv2020 | undefined;

/**
 * Why `schema` does not compile under Ajv's strict mode (an unknown keyword such as `requried`, a
 * `required` name without its property, …), or `undefined`. The runtime reads schemas leniently,
 * as the draft says; the driver conformance kit holds a driver's schemas to this reading, which
 * catches the typos a lenient reading silently ignores.
 */
export function strictSchemaError(schema: JsonSchema): string | undefined {
  strictAjv ??= new Ajv2020({ strict: true, allowUnionTypes: true, validateFormats: false });
  try {
    strictAjv.compile(schema);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    try {
      if (typeof schema === 'object') strictAjv.removeSchema(schema);
    } catch {
      // nothing was cached
    }
  }
}

function compile(schema: JsonSchema, which: Which): ValidateFunction {
  const text = `${which}:${canonicalJson(schema as never)}`;
  const cached = compiled.get(text);
  if (cached !== undefined) return cached;
  try {
    const validate = ajv(which).compile(schema);
    if (compiled.size >= COMPILED_LIMIT) compiled.clear();
    compiled.set(text, validate);
    return validate;
  } finally {
    // Forget the schema by $id so two unrelated specs may reuse an $id; validators stay compiled.
    try {
      if (typeof schema === 'object') ajv(which).removeSchema(schema);
    } catch {
      // nothing was cached
    }
  }
}

/** The provider registry of one runtime. */
export class Registry {
  readonly #providers = new Map<string, ProviderEntry>();
  readonly #specs = new Map<string, SpecEntry>();
  #offers: OfferEntry[] = [];
  #byCapability = new Map<string, OfferEntry[]>();

  /** Validates and adds a provider atomically; throws `SoftwareUseError` on any contract breach. */
  register(provider: CapabilityProvider): void {
    try {
      this.#register(provider);
    } catch (error) {
      if (error instanceof SoftwareUseError) throw error;
      // A getter or proxy trap in what the provider handed over threw: still a contract breach.
      throw registerError(`reading the provider failed (${describeThrown(error).slice(0, 200)})`);
    }
  }

  #register(provider: CapabilityProvider): void {
    if (
      !isRecord(provider) ||
      typeof provider.descriptor !== 'function' ||
      typeof provider.capabilities !== 'function' ||
      typeof provider.invoke !== 'function'
    ) {
      throw registerError('a provider needs descriptor(), capabilities() and invoke()');
    }
    const descriptor = this.#descriptor(provider);
    if (this.#providers.has(descriptor.id)) throw registerError(`provider id ${descriptor.id} is already registered`);
    let raw: unknown;
    try {
      raw = provider.capabilities();
    } catch (error) {
      throw registerError(`capabilities() threw (${error instanceof Error ? error.message : 'non-Error value'})`);
    }
    if (!Array.isArray(raw)) throw registerError('capabilities() must return an array');

    const fresh = new Map<string, SpecEntry>();
    const capabilities: ProviderCapability[] = [];
    const offers: OfferEntry[] = [];
    for (const item of raw as unknown[]) {
      if (!isRecord(item)) throw registerError('each capability must be {spec, interactions}');
      const spec = this.#checkSpec(item.spec);
      const key = `${spec.id}@${spec.version}`;
      if (capabilities.some((c) => c.spec.id === spec.id && c.spec.version === spec.version)) {
        throw registerError(`${key} is listed twice by ${descriptor.id}`);
      }
      const interactions = this.#checkInteractions(item.interactions, key);
      const entry = this.#canonical(spec, key, fresh);
      capabilities.push(Object.freeze({ spec: entry.spec, interactions }));
      for (const interaction of interactions) {
        const offer = Object.freeze({ provider: descriptor, capability: entry.spec, interaction });
        offers.push({ offer, provider, spec: entry, rank: RANK[interaction] });
      }
    }

    // Commit: nothing above changed the registry, so a throw leaves it as it was.
    for (const [key, entry] of fresh) this.#specs.set(key, entry);
    this.#providers.set(descriptor.id, { listing: Object.freeze({ descriptor, capabilities: Object.freeze(capabilities) as ProviderCapability[] }) });
    this.#setOffers([...this.#offers, ...offers].sort(compareOffers));
  }

  /**
   * Removes a provider and the specs no other provider offers (an out-of-process driver whose ops
   * changed across a restart). Invocations already running keep the offer they pinned.
   */
  unregister(providerId: string): boolean {
    if (!this.#providers.delete(providerId)) return false;
    this.#setOffers(this.#offers.filter((o) => o.offer.provider.id !== providerId));
    const used = new Set(this.#offers.map((o) => o.spec));
    for (const [key, entry] of this.#specs) if (!used.has(entry)) this.#specs.delete(key);
    return true;
  }

  #setOffers(offers: OfferEntry[]): void {
    this.#offers = offers;
    const byCapability = new Map<string, OfferEntry[]>();
    for (const entry of this.#offers) {
      const list = byCapability.get(entry.offer.capability.id);
      if (list) list.push(entry);
      else byCapability.set(entry.offer.capability.id, [entry]);
    }
    this.#byCapability = byCapability;
  }

  /** Every offer in discovery order. */
  offers(): readonly OfferEntry[] {
    return this.#offers;
  }

  /** Registered providers, ordered by id. */
  providers(): ProviderListing[] {
    return [...this.#providers.keys()].sort().map((id) => this.#providers.get(id)!.listing);
  }

  /** The canonical spec of `id@version`, if any provider registered it. */
  spec(id: string, version: string): CapabilitySpec | undefined {
    return this.#specs.get(`${id}@${version}`)?.spec;
  }

  /**
   * The first offer that matches id, range and constraints, or the error `start` reports.
   * With `explain`, every offer of the capability is recorded with the reason it (mis)matched.
   */
  select(sel: CheckedSelection, explain?: SelectionCandidate[]): OfferEntry | SoftwareUseError {
    const list = this.#byCapability.get(sel.capabilityId);
    let inRange = false;
    let selected: OfferEntry | undefined;
    if (list !== undefined) {
      for (const entry of list) {
        let versionOk = entry.spec.satisfies.get(sel.range);
        if (versionOk === undefined) {
          versionOk = sel.range.test(entry.spec.version);
          entry.spec.satisfies.set(sel.range, versionOk);
        }
        const providerOk = sel.providerId === undefined || entry.offer.provider.id === sel.providerId;
        const interactionOk = sel.interaction === undefined || entry.offer.interaction === sel.interaction;
        inRange ||= versionOk;
        const matched = versionOk && providerOk && interactionOk;
        if (matched && selected === undefined) {
          selected = entry;
          if (explain === undefined) return entry;
        }
        if (explain !== undefined)
          explain.push({ offer: entry.offer, matched, reason: reason(entry, sel, versionOk, providerOk, interactionOk, selected === entry) });
      }
    }
    if (selected !== undefined) return selected;
    const range = sel.range.range || '*';
    if (!inRange) {
      return new SoftwareUseError('capability_unavailable', `no provider offers ${sel.capabilityId} within version "${range}"`, {
        hint: 'call discover to see which capabilities and versions are offered',
      });
    }
    const wanted = [sel.providerId && `provider ${sel.providerId}`, sel.interaction && `interaction ${sel.interaction}`].filter(Boolean).join(' and ');
    return new SoftwareUseError('constraint_unsatisfied', `${sel.capabilityId} is offered within "${range}" but not through ${wanted}`, {
      hint: 'drop or change the constraints, or call discover to see the offers',
    });
  }

  #descriptor(provider: CapabilityProvider): ProviderDescriptor {
    let raw: unknown;
    try {
      raw = provider.descriptor();
    } catch (error) {
      throw registerError(`descriptor() threw (${error instanceof Error ? error.message : 'non-Error value'})`);
    }
    if (!isRecord(raw)) throw registerError('descriptor() must return {id, version, name, description}');
    if (!isValidIdentifier(raw.id)) throw registerError('the provider id is not a valid identifier (lowercase letters, digits, ".", "/", "-")');
    if (!isCanonicalVersion(raw.version)) throw registerError(`provider ${raw.id} has no valid semver version`);
    if (typeof raw.name !== 'string' || typeof raw.description !== 'string') throw registerError(`provider ${raw.id} needs a string name and description`);
    return Object.freeze({ id: raw.id, version: raw.version, name: raw.name, description: raw.description });
  }

  #checkSpec(raw: unknown): CapabilitySpec {
    if (!isRecord(raw)) throw registerError('a capability spec must be an object');
    if (!isValidIdentifier(raw.id)) throw registerError('a capability id is not a valid identifier (lowercase letters, digits, ".", "/", "-")');
    if (!isCanonicalVersion(raw.version)) throw registerError(`capability ${raw.id} has no valid semver version`);
    const key = `${raw.id}@${raw.version}`;
    if (typeof raw.title !== 'string' || typeof raw.description !== 'string') throw registerError(`${key} needs a string title and description`);
    if (!isSafety(raw.safety)) throw registerError(`${key} has no safety (read_only or mutating)`);
    if (!isSchema(raw.input_schema) || !isSchema(raw.output_schema))
      throw registerError(`${key} needs JSON input_schema and output_schema (objects or booleans)`);
    return {
      id: raw.id,
      version: raw.version,
      title: raw.title,
      description: raw.description,
      input_schema: raw.input_schema,
      output_schema: raw.output_schema,
      safety: raw.safety,
    };
  }

  #checkInteractions(raw: unknown, key: string): InteractionKind[] {
    if (!Array.isArray(raw) || raw.length === 0) throw registerError(`${key} needs a non-empty interactions list`);
    const seen = new Set<InteractionKind>();
    for (const kind of raw as unknown[]) {
      if (!isInteractionKind(kind)) throw registerError(`${key} lists an unknown interaction kind (use typed, semantic_ui or visual_ui)`);
      if (seen.has(kind)) throw registerError(`${key} lists interaction ${kind} twice`);
      seen.add(kind);
    }
    return Object.freeze([...seen]) as InteractionKind[];
  }

  /** The canonical entry for a spec: the registered one (if identical), or a freshly compiled one. */
  #canonical(spec: CapabilitySpec, key: string, fresh: Map<string, SpecEntry>): SpecEntry {
    const canonical = canonicalJson({
      title: spec.title,
      description: spec.description,
      safety: spec.safety,
      input_schema: spec.input_schema,
      output_schema: spec.output_schema,
    } as never);
    const existing = this.#specs.get(key) ?? fresh.get(key);
    if (existing !== undefined) {
      if (existing.canonical !== canonical) {
        throw registerError(
          `${key} conflicts with the canonical spec already registered (schemas, safety, title or description differ); a new contract needs a new version`,
        );
      }
      return existing;
    }
    const frozen = frozenCopy(spec as unknown as Record<string, unknown>) as unknown as CapabilitySpec;
    const entry: SpecEntry = {
      spec: frozen,
      version: new semver.SemVer(frozen.version),
      satisfies: new WeakMap(),
      canonical,
      validateInput: this.#compile(frozen.input_schema, key, 'input_schema'),
      validateOutput: this.#compile(frozen.output_schema, key, 'output_schema'),
      outputNames: declaredNames(frozen.output_schema),
    };
    fresh.set(key, entry);
    return entry;
  }

  #compile(schema: JsonSchema, key: string, which: Which): ValidateFunction {
    try {
      return compile(schema, which);
    } catch (error) {
      throw registerError(`${key} ${which} does not compile under JSON Schema Draft 2020-12 (${error instanceof Error ? error.message : 'unknown error'})`);
    }
  }
}

function reason(entry: OfferEntry, sel: CheckedSelection, versionOk: boolean, providerOk: boolean, interactionOk: boolean, isSelected: boolean): string {
  if (isSelected) return 'selected: the first offer in discovery order that matches';
  const why: string[] = [];
  if (!versionOk) why.push(`version ${entry.offer.capability.version} does not satisfy "${sel.range.range || '*'}"`);
  if (!providerOk) why.push(`provider ${entry.offer.provider.id} is not the required ${sel.providerId}`);
  if (!interactionOk) why.push(`interaction ${entry.offer.interaction} is not the required ${sel.interaction}`);
  return why.length > 0 ? why.join('; ') : 'matches, but an earlier offer in discovery order was selected';
}

/** Every name a schema declares under `properties` or `required`, at any depth. */
function declaredNames(schema: unknown, names = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) {
    for (const item of schema) declaredNames(item, names);
  } else if (isRecord(schema)) {
    if (isRecord(schema.properties)) for (const name of Object.keys(schema.properties)) names.add(name);
    if (Array.isArray(schema.required)) for (const name of schema.required) if (typeof name === 'string') names.add(name);
    for (const value of Object.values(schema)) declaredNames(value, names);
  }
  return names;
}

/**
 * A form generated from an op's `params_schema`: strings, numbers, integers, booleans, enums and
 * string arrays get proper fields; anything more complex falls back to a JSON text area. The
 * submitted value is plain JSON; the hub validates it again against the same schema.
 */
import { useMemo, useState } from 'react';
import type { FormEvent } from 'react';
import type { JsonSchema, JsonValue } from '../../shared/wire';

interface Prop {
  name: string;
  schema: Record<string, unknown>;
  required: boolean;
}

type Kind = 'string' | 'text' | 'number' | 'integer' | 'boolean' | 'enum' | 'string-array' | 'json';

function kindOf(s: Record<string, unknown>): Kind {
  if (Array.isArray(s.enum) && s.enum.every((v) => typeof v === 'string')) return 'enum';
  switch (s.type) {
    case 'string':
      return typeof s.maxLength === 'number' && s.maxLength <= 200 ? 'string' : 'text';
    case 'number':
      return 'number';
    case 'integer':
      return 'integer';
    case 'boolean':
      return 'boolean';
    case 'array':
      return (s.items as { type?: string } | undefined)?.type === 'string' ? 'string-array' : 'json';
    default:
      return 'json';
  }
}

/** The top-level properties of an object schema (empty for anything else). */
export function schemaProps(schema: JsonSchema): Prop[] {
  if (typeof schema !== 'object' || !schema || typeof schema.properties !== 'object' || !schema.properties) return [];
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  return Object.entries(schema.properties as Record<string, Record<string, unknown>>).map(([name, s]) => ({
    name,
    schema: s ?? {},
    required: required.includes(name),
  }));
}

/**
 * The fields as the form opens: each property's schema `default`, as its field holds it, so a run
 * without edits sends what the schema gives (an op's defaults are minimal valid args).
 */
export function initialValues(props: Prop[]): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  for (const p of props) {
    const def = p.schema.default;
    if (def === undefined) continue;
    const kind = kindOf(p.schema);
    if (kind === 'boolean') {
      if (typeof def === 'boolean') out[p.name] = def;
    } else if (kind === 'json') out[p.name] = JSON.stringify(def);
    else if (kind === 'string-array') {
      if (Array.isArray(def)) out[p.name] = def.join(' ');
    } else if (typeof def === 'string' || typeof def === 'number') out[p.name] = String(def);
  }
  return out;
}

/** Builds the args object from the raw field values; throws with a readable message. */
export function buildArgs(props: Prop[], values: Record<string, string | boolean>): JsonValue {
  const out: Record<string, JsonValue> = {};
  for (const p of props) {
    const raw = values[p.name];
    const kind = kindOf(p.schema);
    if (kind === 'boolean') {
      if (raw !== undefined) out[p.name] = raw === true;
      continue;
    }
    if (raw === undefined || raw === '') {
      if (p.required) throw new Error(`${p.name} is required`);
      continue;
    }
    const text = String(raw);
    switch (kind) {
      case 'number':
      case 'integer': {
        const n = Number(text);
        if (!Number.isFinite(n) || (kind === 'integer' && !Number.isInteger(n)))
          throw new Error(`${p.name} must be ${kind === 'integer' ? 'an integer' : 'a number'}`);
        out[p.name] = n;
        break;
      }
      case 'string-array':
        out[p.name] = text.split(/[\s,]+/).filter(Boolean);
        break;
      case 'json':
        try {
          out[p.name] = JSON.parse(text) as JsonValue;
        } catch {
          throw new Error(`${p.name} must be JSON`);
        }
        break;
      default:
        out[p.name] = text;
    }
  }
  return out;
}

export function SchemaForm({
  schema,
  submitLabel,
  onSubmit,
  busy,
  idPrefix,
}: {
  schema: JsonSchema;
  submitLabel: string;
  onSubmit: (args: JsonValue) => void;
  busy: boolean;
  idPrefix: string;
}) {
  const props = useMemo(() => schemaProps(schema), [schema]);
  const [values, setValues] = useState<Record<string, string | boolean>>(() => initialValues(props));
  const [error, setError] = useState<string>();
  const set = (name: string, v: string | boolean) => setValues((m) => ({ ...m, [name]: v }));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    try {
      setError(undefined);
      onSubmit(buildArgs(props, values));
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <form className="schema-form" onSubmit={submit}>
      {props.length === 0 && <p className="muted small">This op takes no arguments.</p>}
      {props.map((p) => {
        const id = `${idPrefix}-${p.name}`;
        const kind = kindOf(p.schema);
        const desc = typeof p.schema.description === 'string' ? p.schema.description : undefined;
        const def = p.schema.default !== undefined ? JSON.stringify(p.schema.default) : undefined;
        const label = (
          <span className="field-label">
            {p.name}
            {p.required && (
              <span className="req" aria-label="required">
                *
              </span>
            )}
            {desc && <span className="muted small"> — {desc}</span>}
          </span>
        );
        if (kind === 'boolean') {
          return (
            <label key={p.name} className="field field-check" htmlFor={id}>
              <input id={id} type="checkbox" checked={values[p.name] === true} onChange={(e) => set(p.name, e.target.checked)} />
              {label}
            </label>
          );
        }
        return (
          <label key={p.name} className="field" htmlFor={id}>
            {label}
            {kind === 'enum' ? (
              <select id={id} value={String(values[p.name] ?? '')} onChange={(e) => set(p.name, e.target.value)}>
                <option value="">{p.required ? 'choose…' : '(default)'}</option>
                {(p.schema.enum as string[]).map((v) => (
                  <option key={v}>{v}</option>
                ))}
              </select>
            ) : kind === 'text' || kind === 'json' ? (
              <textarea
                id={id}
                rows={kind === 'json' ? 4 : 2}
                value={String(values[p.name] ?? '')}
                placeholder={def ? `default ${def}` : kind === 'json' ? 'JSON' : ''}
                onChange={(e) => set(p.name, e.target.value)}
              />
            ) : (
              <input
                id={id}
                type={kind === 'number' || kind === 'integer' ? 'number' : 'text'}
                value={String(values[p.name] ?? '')}
                placeholder={def ? `default ${def}` : kind === 'string-array' ? 'space or comma separated' : ''}
                onChange={(e) => set(p.name, e.target.value)}
              />
            )}
          </label>
        );
      })}
      {error && (
        <div className="error-box" role="alert">
          {error}
        </div>
      )}
      <button type="submit" className="btn btn-primary" disabled={busy}>
        {busy ? 'Running…' : submitLabel}
      </button>
    </form>
  );
}

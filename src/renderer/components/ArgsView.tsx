/**
 * Arguments in full and readable: strings as text (a message reads as a message, newlines and
 * all, never escaped JSON), numbers and booleans as values, nested data as indented JSON. The
 * operator approves exactly what is injected, so control characters are shown as escapes, and a
 * newline (Enter, to a shell) is shown as `\n` before the line break.
 */
import { escapeControl } from '../../shared/escape';
import type { JsonValue } from '../../shared/wire';

const shown = (s: string): string => s.split('\n').map(escapeControl).join('\\n\n');

/** From this length on, a text's length is stated beside its name. */
const LENGTH_SHOWN_FROM = 72;

/** Enum-like strings (`full`, `Enter`) read better as chips than as text blocks. */
const isToken = (s: string): boolean => s.length > 0 && s.length <= 24 && !/\s/.test(s);

function Value({ value }: { value: JsonValue }) {
  if (typeof value === 'string' && isToken(value)) return <code className="arg-chip">{escapeControl(value)}</code>;
  if (typeof value === 'string') return <div className="arg-text">{value === '' ? <em className="muted">(empty)</em> : shown(value)}</div>;
  if (value === null || typeof value !== 'object') return <code className="arg-scalar">{String(value)}</code>;
  if (Array.isArray(value) && value.every((v) => typeof v === 'string' && v.length < 40)) {
    return (
      <div className="arg-list">
        {value.map((v, i) => (
          <code key={i} className="arg-chip">
            {escapeControl(v as string)}
          </code>
        ))}
      </div>
    );
  }
  return <pre className="json">{JSON.stringify(value, null, 2).split('\n').map(escapeControl).join('\n')}</pre>;
}

export function ArgsView({ args }: { args: JsonValue | undefined }) {
  if (args === undefined || args === null) return <span className="muted">no arguments</span>;
  if (typeof args !== 'object' || Array.isArray(args)) return <Value value={args} />;
  const entries = Object.entries(args);
  if (entries.length === 0) return <span className="muted">no arguments</span>;
  return (
    <dl className="args">
      {entries.map(([k, v]) => (
        <div className="arg" key={k}>
          <dt>
            {escapeControl(k)}
            {typeof v === 'string' && [...v].length > LENGTH_SHOWN_FROM && <span className="arg-length">({[...v].length} chars)</span>}
          </dt>
          <dd>
            <Value value={v} />
          </dd>
        </div>
      ))}
    </dl>
  );
}

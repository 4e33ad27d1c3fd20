/**
 * A channel's page: labels, tier (with the human-only control where the driver has one), a
 * read-only preview, and each op with its summary, schemas and a form to run it as the operator.
 */
import { escapeControl } from '../../shared/escape';
import { useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { RunOpResult } from '../../shared/panel-types';
import type { JsonValue, OpSpec } from '../../shared/wire';
import { opIsMutating } from '../../shared/wire';
import { describeChannel, previewChannel, runOp, setTier } from '../actions';
import { useStore } from '../store';
import { ArgsView } from './ArgsView';
import { Badge, ErrorBox, JsonBlock, Loading } from './common';
import { LiveWindow } from './LiveWindow';
import { SchemaForm } from './SchemaForm';

// Recognised by their first bytes in base64 (PNG's signature, JPEG's SOI marker), not by field name.
const IMAGE_PREFIXES: ReadonlyArray<readonly [string, string]> = [
  ['iVBORw0KGgo', 'image/png'],
  ['/9j/', 'image/jpeg'],
];
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function imageType(value: string): string | undefined {
  const type = IMAGE_PREFIXES.find(([prefix]) => value.startsWith(prefix))?.[1];
  return type && BASE64.test(value) ? type : undefined;
}

/**
 * An op's output with its base64 images (a screenshot) taken out to be shown as images; each
 * leaves a short note in its field, so the rest reads as text instead of a wall of base64.
 */
export function splitImages(output: JsonValue): { images: Array<{ field: string; src: string }>; rest: JsonValue } {
  if (!output || typeof output !== 'object' || Array.isArray(output)) return { images: [], rest: output };
  const images: Array<{ field: string; src: string }> = [];
  const rest: Record<string, JsonValue> = {};
  for (const [field, value] of Object.entries(output)) {
    const type = typeof value === 'string' ? imageType(value) : undefined;
    if (typeof value !== 'string' || type === undefined) {
      rest[field] = value;
      continue;
    }
    images.push({ field, src: `data:${type};base64,${value}` });
    rest[field] = `(${type}, ${Math.round((value.length * 3) / 4 / 1024)} KB, shown above)`;
  }
  return { images, rest };
}

function OpResult({ channel, op, output }: { channel: string; op: string; output: JsonValue }) {
  const { images, rest } = splitImages(output);
  return (
    <div className="result ok-box">
      <h5>Result</h5>
      {images.map((image) => (
        <img key={image.field} className="result-img" src={image.src} alt={escapeControl(`${op} ${image.field} of ${channel}`)} />
      ))}
      <ArgsView args={rest} />
    </div>
  );
}

function OpCard({ channel, op }: { channel: string; op: OpSpec }) {
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<RunOpResult>();
  const run = async (args: JsonValue) => {
    setBusy(true);
    setResult(undefined);
    setResult(await runOp(channel, op.op, args));
    setBusy(false);
  };
  const mutating = opIsMutating(op);
  return (
    <details className="op-card">
      <summary>
        <span className="mono op-name">{op.op}</span>
        <Badge tone={mutating ? 'warn' : 'ok'}>{mutating ? 'mutating' : 'read-only'}</Badge>
        <span className="muted">{op.summary}</span>
      </summary>
      <div className="op-body">
        <div className="op-form">
          <h4>Run as operator</h4>
          <SchemaForm schema={op.params_schema} submitLabel={`Run ${op.op}`} onSubmit={(a) => void run(a)} busy={busy} idPrefix={`${channel}-${op.op}`} />
          {result && (result.ok ? <OpResult channel={channel} op={op.op} output={result.output ?? null} /> : <ErrorBox error={result.error ?? 'failed'} />)}
        </div>
        <div className="op-schemas">
          <h4>params_schema</h4>
          <JsonBlock value={op.params_schema} label={`${op.op} params schema`} />
          <h4>result_schema</h4>
          <JsonBlock value={op.result_schema} label={`${op.op} result schema`} />
        </div>
      </div>
    </details>
  );
}

export function ChannelPage({ channel }: { channel: string }) {
  const { described, preview, listed } = useStore(
    useShallow((s) => ({
      described: s.channels.described[channel],
      preview: s.channels.previews[channel],
      listed: s.channels.list.data?.channels.find((c) => c.channel === channel),
    })),
  );
  const d = described?.data;
  // The list is refreshed after every tier change; it is the fresher source of the tier.
  const tier = listed?.tier ?? d?.channel.tier;
  const tierMeaning = d?.channel.tiers?.find((t) => t.name === tier)?.description;
  // A high-risk tier (godmode) is one change away from letting an agent send any key chord: the
  // operator confirms it, with what it allows, before anything is granted.
  const [confirming, setConfirming] = useState<string | undefined>();
  const pick = (name: string): void => {
    if (d?.channel.tiers?.find((t) => t.name === name)?.risk === 'high') setConfirming(name);
    else void setTier(channel, name);
  };
  const risky = confirming ? d?.channel.tiers?.find((t) => t.name === confirming) : undefined;
  // A window (a read-only screenshot and no text to read) is shown live instead of on request.
  const live = d !== undefined && d.ops.some((o) => o.op === 'screenshot' && !opIsMutating(o)) && !d.ops.some((o) => o.op === 'read');
  return (
    <div className="channel-page">
      <header className="view-head">
        <h2 className="mono">{escapeControl(channel)}</h2>
        {d?.channel.labels.map((l) => (
          <Badge key={l} tone="accent">
            {escapeControl(l)}
          </Badge>
        ))}
      </header>
      {described?.loading && !d && <Loading what="the channel" />}
      {described?.error && <ErrorBox error={described.error} onRetry={() => void describeChannel(channel)} />}
      {d && (
        <>
          {d.channel.tiers && (
            <div className="tier-control">
              <label htmlFor="tier-select">
                Tier <span className="muted small">(human-only: agents can never change it)</span>
              </label>
              <select id="tier-select" value={confirming ?? tier ?? ''} onChange={(e) => pick(e.target.value)} disabled={confirming !== undefined}>
                {d.channel.tiers.map((t) => (
                  <option key={t.name} value={t.name} title={t.description}>
                    {escapeControl(t.name)}
                  </option>
                ))}
              </select>
              {tierMeaning && <span className="muted small">{escapeControl(tierMeaning)}</span>}
              {risky && (
                <div className="tier-confirm" role="alertdialog" aria-label={`Grant ${risky.name}?`}>
                  <p>
                    Grant <b>{escapeControl(risky.name)}</b> on <span className="mono">{escapeControl(channel)}</span>? {escapeControl(risky.description)}
                  </p>
                  <button
                    type="button"
                    className="btn btn-danger"
                    onClick={() => {
                      setConfirming(undefined);
                      void setTier(channel, risky.name);
                    }}
                  >
                    Grant {escapeControl(risky.name)}
                  </button>
                  <button type="button" className="btn" onClick={() => setConfirming(undefined)}>
                    Cancel
                  </button>
                </div>
              )}
            </div>
          )}
          <details className="channel-detail-json">
            <summary>Detail</summary>
            <JsonBlock value={d.channel.detail} />
          </details>
        </>
      )}
      {live && (
        <section className="preview" aria-label="Live view">
          <h3>Live</h3>
          <LiveWindow channel={channel} />
        </section>
      )}
      {!live && (
        <section className="preview" aria-label="Preview">
          <header className="section-head">
            <h3>Preview</h3>
            <button type="button" className="btn btn-small" onClick={() => void previewChannel(channel)} disabled={preview?.loading}>
              {preview?.loading ? 'Refreshing…' : 'Refresh'}
            </button>
          </header>
          {preview?.loading && !preview.data && <Loading what="the preview" />}
          {preview?.error && <ErrorBox error={preview.error} />}
          {preview?.data?.error && <p className="muted small">{preview.data.error}</p>}
          {preview?.data?.text !== undefined && (
            <pre className="pane-text" aria-label="Recent text">
              {preview.data.text ? preview.data.text.split('\n').map(escapeControl).join('\n') : '(empty)'}
            </pre>
          )}
          {preview?.data?.image_png && <img className="preview-img" src={`data:image/png;base64,${preview.data.image_png}`} alt={`Screenshot of ${channel}`} />}
        </section>
      )}
      {d && (
        <section aria-label="Ops">
          <h3>Ops</h3>
          {d.ops.length === 0 && <p className="muted">This driver offers no ops.</p>}
          {d.ops.map((op) => (
            <OpCard key={op.op} channel={channel} op={op} />
          ))}
        </section>
      )}
    </div>
  );
}

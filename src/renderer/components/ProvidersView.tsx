/** The kernel's provider registry and a selection preview: which provider would run a capability, and why. */
import { useState } from 'react';
import type { FormEvent } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { InteractionKind } from '../../shared/wire';
import { INTERACTION_KINDS } from '../../shared/wire';
import { explainSelection, loadProviders } from '../actions';
import { useStore } from '../store';
import { Badge, Empty, ErrorBox, Loading } from './common';

export function ProvidersView() {
  const { list, explanation } = useStore(useShallow((s) => ({ list: s.providers.list, explanation: s.providers.explanation })));
  const [capability, setCapability] = useState('');
  const [provider, setProvider] = useState('');
  const [interaction, setInteraction] = useState<InteractionKind | ''>('');
  const [versionRequirement, setVersionRequirement] = useState('');
  const capabilities = [...new Set((list.data ?? []).flatMap((p) => p.capabilities))].sort();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!capability) return;
    void explainSelection({
      capability_id: capability,
      ...(versionRequirement.trim() ? { version_requirement: versionRequirement.trim() } : {}),
      ...(provider ? { provider_id: provider } : {}),
      ...(interaction ? { interaction } : {}),
    });
  };
  const x = explanation.data;
  return (
    <section className="view" aria-labelledby="providers-h">
      <header className="view-head">
        <h2 id="providers-h">Providers</h2>
        <span className="spacer" />
        <button type="button" className="btn btn-small" onClick={() => void loadProviders()}>
          Refresh
        </button>
      </header>
      {list.error && <ErrorBox error={list.error} onRetry={() => void loadProviders()} />}
      {list.loading && !list.data && <Loading what="providers" />}
      {list.data && list.data.length === 0 && (
        <Empty title="No providers registered">Drivers register one provider per interaction kind when the hub starts.</Empty>
      )}
      {list.data && list.data.length > 0 && (
        <table className="table">
          <thead>
            <tr>
              <th scope="col">Provider</th>
              <th scope="col">Version</th>
              <th scope="col">Driver</th>
              <th scope="col">Interaction</th>
              <th scope="col">Capabilities</th>
            </tr>
          </thead>
          <tbody>
            {list.data.map((p) => (
              <tr key={p.provider_id}>
                <td className="mono">{p.provider_id}</td>
                <td className="mono">{p.version ?? '—'}</td>
                <td>{p.driver}</td>
                <td>
                  <Badge tone="info">{p.interaction}</Badge>
                </td>
                <td className="caps">
                  {p.capabilities.map((c) => (
                    <code key={c} className="arg-chip">
                      {c}
                    </code>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h3>Selection preview</h3>
      <form className="inline-form" onSubmit={submit}>
        <label>
          Capability
          <input list="capability-ids" value={capability} onChange={(e) => setCapability(e.target.value)} placeholder="tmux.send" required />
          <datalist id="capability-ids">
            {capabilities.map((c) => (
              <option key={c} value={c} />
            ))}
          </datalist>
        </label>
        <label>
          Version requirement
          <input value={versionRequirement} onChange={(e) => setVersionRequirement(e.target.value)} placeholder="^1" />
        </label>
        <label>
          Provider (constraint)
          <input value={provider} onChange={(e) => setProvider(e.target.value)} placeholder="any" />
        </label>
        <label>
          Interaction (constraint)
          <select value={interaction} onChange={(e) => setInteraction(e.target.value as InteractionKind | '')}>
            <option value="">any</option>
            {INTERACTION_KINDS.map((k) => (
              <option key={k}>{k}</option>
            ))}
          </select>
        </label>
        <button type="submit" className="btn btn-primary" disabled={!capability || explanation.loading}>
          Explain
        </button>
      </form>
      {explanation.error && <ErrorBox error={explanation.error} />}
      {x && (
        <div className="explanation" aria-live="polite">
          {x.selected ? (
            <p>
              The kernel would pick <b className="mono">{x.selected.provider_id}</b> ({x.selected.interaction}, version {x.selected.capability_version}).
            </p>
          ) : (
            <p className="bad-text">{x.error ? `${x.error.code}: ${x.error.message}` : 'No provider would be selected.'}</p>
          )}
          {x.candidates.length > 0 && (
            <ol className="candidates">
              {x.candidates.map((c, i) => (
                <li key={i} className={c.selected ? 'selected' : ''}>
                  <span className="mono">{c.provider_id}</span> <Badge tone="info">{c.interaction}</Badge>{' '}
                  <span className="muted">v{c.capability_version}</span> — {c.reason}
                </li>
              ))}
            </ol>
          )}
        </div>
      )}
    </section>
  );
}

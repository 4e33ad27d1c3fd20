/** Standing rules (edit, confirm, revoke, last use), live session grants, the approval timeout, how to connect an agent, the data directory. */
import { escapeControl } from '../../shared/escape';
import { useEffect, useState } from 'react';
import type { FormEvent } from 'react';
import { useShallow } from 'zustand/react/shallow';
import {
  confirmRule,
  createAgent,
  listAgents,
  loadRules,
  loadSessionGrants,
  loadSettings,
  revokeAgent,
  revokeRule,
  revokeSessionGrant,
  setApprovalTimeout,
  updateRule,
} from '../actions';
import type { AgentEntry, ApprovalRule } from '../../shared/panel-types';
import { describeArgs, scopeInWords } from '../../shared/arg-constraints';
import { parseOps } from './ApprovalCard';
import { useStore } from '../store';
import { formatAgo, formatDuration } from '../format';
import { CopyField, Empty, ErrorBox, Loading, useNow } from './common';

/**
 * A word for a POSIX shell or cmd.exe: bare when safe, else double-quoted (paths with spaces).
 * Backslashes stay as they are: they are Windows path separators, and literal in POSIX quotes.
 */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./\\-]+$/.test(word) ? word : `"${word.replace(/(["$`])/g, '\\$1')}"`;
}

/**
 * The two `claude mcp add` commands for this hub. Stdio runs `stdioCommand` (the packaged app
 * itself as `Uplink mcp`, or `bin/uplink mcp` from a checkout); older hubs only send `cliPath`.
 */
export function mcpCommands(
  mcpUrl: string | undefined,
  token: string | undefined,
  cliPath: string | undefined,
  stdioCommand?: string[],
  dataDir?: string,
): { http?: string; stdio: string } {
  const argv = stdioCommand?.length ? stdioCommand : [cliPath ?? 'uplink', 'mcp'];
  // The hub's data directory travels with the command: without it `uplink mcp` would look for a
  // hub (and read a config) in the default one, which may not be this hub's.
  const env = dataDir ? `-e ${shellWord(`UPLINK_DATA_DIR=${dataDir}`)} ` : '';
  const stdio = `claude mcp add uplink ${env}-- ${argv.map(shellWord).join(' ')}`;
  if (!mcpUrl) return { stdio };
  return { stdio, http: `claude mcp add --transport http uplink ${mcpUrl} --header "Authorization: Bearer ${token ?? '<token>'}"` };
}

/**
 * Named agent credentials: a call's agent is the credential it authenticated with. A new token is
 * shown here once, in a connect command, and never again (the hub keeps only its hash).
 */
function AgentsSection({ mcpUrl }: { mcpUrl: string | undefined }) {
  const [agents, setAgents] = useState<AgentEntry[] | undefined>();
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ id: string; token: string } | undefined>();
  const refresh = () => void listAgents().then((a) => a && setAgents(a));
  useEffect(refresh, []);
  const create = (e: FormEvent) => {
    e.preventDefault();
    void createAgent(name.trim()).then((c) => {
      if (!c) return;
      setCreated(c);
      setName('');
      refresh();
    });
  };
  const live = agents?.filter((a) => !a.revoked_at) ?? [];
  return (
    <>
      <h3>Agents</h3>
      <p className="muted small">
        Each agent connects with its own token, and rules and the timeline name it by that. The client name an agent declares is shown beside it, never trusted.
      </p>
      {agents && agents.length === 0 && <Empty title="No named agents">Agents connect with the hub's default token (shown as “default”).</Empty>}
      {agents && agents.length > 0 && (
        <table className="table" aria-label="Agents">
          <thead>
            <tr>
              <th scope="col">Agent</th>
              <th scope="col">Created</th>
              <th scope="col">Status</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {agents.map((a) => (
              <tr key={a.id}>
                <td className="mono">{a.id}</td>
                <td>{`${a.created_at.slice(0, 16).replace('T', ' ')} by ${a.created_by}`}</td>
                <td>{a.revoked_at ? `revoked ${a.revoked_at.slice(0, 16).replace('T', ' ')}` : 'active'}</td>
                <td>
                  {live.includes(a) && (
                    <button type="button" className="btn btn-small btn-danger" onClick={() => void revokeAgent(a.id).then(refresh)}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form className="inline-form" onSubmit={create}>
        <label>
          New agent
          <input value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. claude-build" pattern="[a-z][a-z0-9_\-]{0,63}" maxLength={64} />
        </label>
        <button type="submit" className="btn" disabled={!name.trim()}>
          Create
        </button>
      </form>
      {created && (
        <div className="connect" role="status">
          <p>
            Agent <b>{created.id}</b> created. Its token is shown only now:
          </p>
          <CopyField label="Claude Code over HTTP, as this agent" value={mcpCommands(mcpUrl, created.token, undefined).http ?? created.token} />
          <button type="button" className="btn btn-small" onClick={() => setCreated(undefined)}>
            Done
          </button>
        </div>
      )}
    </>
  );
}

/** One rule: its scope in words, and Edit (checked by the hub like a prompt's scope). */
function RuleRow({ rule: r, now }: { rule: ApprovalRule; now: number }) {
  const [editing, setEditing] = useState<{ channel: string; ops: string; agent: string; keepArgs: boolean }>();
  const save = (e: FormEvent) => {
    e.preventDefault();
    if (!editing) return;
    const agent = editing.agent.trim();
    const args = editing.keepArgs ? r.args : undefined;
    void updateRule(r.rule_id, { channel: editing.channel.trim(), ops: parseOps(editing.ops), ...(agent ? { agent } : {}), ...(args ? { args } : {}) }).then(
      (ok) => ok && setEditing(undefined),
    );
  };
  return (
    <tr className={r.proposed ? 'rule-proposed' : undefined}>
      <td className="mono">
        {r.rule_id}
        {r.proposed && (
          <div className="badge badge-warn" title="Written to config.json outside the panel: not in force until you confirm it">
            proposed
          </div>
        )}
      </td>
      <td>
        {editing ? (
          <form className="inline-form" onSubmit={save} aria-label={`Edit rule ${r.rule_id}`}>
            <label>
              Channel
              <input
                value={editing.channel}
                onChange={(e) => setEditing({ ...editing, channel: e.target.value })}
                maxLength={256}
                required
                title="A label or a glob over labels, e.g. tmux:build-*"
              />
            </label>
            <label>
              Ops
              <input
                value={editing.ops}
                onChange={(e) => setEditing({ ...editing, ops: e.target.value })}
                maxLength={1000}
                required
                title="Op names or globs, separated by commas"
              />
            </label>
            <label>
              Agent
              <input value={editing.agent} onChange={(e) => setEditing({ ...editing, agent: e.target.value })} maxLength={128} placeholder="any agent" />
            </label>
            {r.args && (
              <label title="Untick to cover any args">
                <input type="checkbox" checked={editing.keepArgs} onChange={(e) => setEditing({ ...editing, keepArgs: e.target.checked })} />
                {escapeControl(`only with ${describeArgs(r.args)}`)}
              </label>
            )}
            <button type="submit" className="btn btn-small">
              Save
            </button>
            <button type="button" className="btn btn-small" onClick={() => setEditing(undefined)}>
              Cancel
            </button>
          </form>
        ) : (
          <span className="mono">{escapeControl(scopeInWords(r))}</span>
        )}
      </td>
      <td>{r.created_at ? `${r.created_at.slice(0, 16).replace('T', ' ')}${r.created_by ? ` by ${r.created_by}` : ''}` : '—'}</td>
      <td>{r.last_used_at ? `${formatAgo(r.last_used_at, now)} (${r.uses}×)` : 'never'}</td>
      <td className="row-actions">
        {r.proposed && (
          <button
            type="button"
            className="btn btn-small btn-primary"
            onClick={() => void confirmRule(r.rule_id, r.digest)}
            title="Put this rule in force as shown"
          >
            Confirm
          </button>
        )}
        {!editing && (
          <button
            type="button"
            className="btn btn-small"
            onClick={() => setEditing({ channel: r.channel, ops: r.ops.join(', '), agent: r.agent ?? '', keepArgs: true })}
          >
            Edit
          </button>
        )}
        <button type="button" className="btn btn-small btn-danger" onClick={() => void revokeRule(r.rule_id)}>
          {r.proposed ? 'Discard' : 'Revoke'}
        </button>
      </td>
    </tr>
  );
}

/**
 * A session as an operator tells sessions apart: its client (as declared) and the first digits of
 * its id, the whole id in the tooltip, rather than a bare UUID.
 */
export function sessionInWords(g: { session: string; client?: string | undefined }): string {
  const id = g.session.length > 12 ? `${g.session.slice(0, 8)}…` : g.session;
  return escapeControl(g.client ? `${id} (client declares "${g.client}")` : id);
}

/** Live "approve for the session" grants: what each covers, who granted it, and Revoke. */
function SessionGrantsSection({ now }: { now: number }) {
  const grants = useStore((s) => s.settings.sessionGrants);
  useEffect(() => void loadSessionGrants(), []);
  return (
    <>
      <h3>Session grants</h3>
      {grants.error && <ErrorBox error={grants.error} onRetry={() => void loadSessionGrants()} />}
      {grants.data && grants.data.length === 0 && (
        <Empty title="No session grants">“Approve for session” on a prompt adds one; it ends with the agent's session or when you revoke it.</Empty>
      )}
      {grants.data && grants.data.length > 0 && (
        <table className="table" aria-label="Session grants">
          <thead>
            <tr>
              <th scope="col">Covers</th>
              <th scope="col">Session</th>
              <th scope="col">Granted</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {grants.data.map((g) => (
              <tr key={g.grant_id}>
                <td className="mono">{escapeControl(scopeInWords(g))}</td>
                <td title={`session ${escapeControl(g.session)}`}>{sessionInWords(g)}</td>
                <td>{`${formatAgo(g.granted_at, now)} by ${escapeControl(g.granted_by)}`}</td>
                <td>
                  <button type="button" className="btn btn-small btn-danger" onClick={() => void revokeSessionGrant(g.grant_id)}>
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

function NotificationsToggle() {
  const [perm, setPerm] = useState(typeof Notification === 'undefined' ? 'unsupported' : Notification.permission);
  if (perm === 'unsupported') return null;
  return (
    <p>
      Desktop notifications: <b>{perm}</b>{' '}
      {perm === 'default' && (
        <button type="button" className="btn btn-small" onClick={() => void Notification.requestPermission().then(setPerm)}>
          Enable
        </button>
      )}
    </p>
  );
}

export function SettingsView() {
  const { settings, rules, host } = useStore(useShallow((s) => ({ settings: s.settings.settings, rules: s.settings.rules, host: s.connection.host })));
  const now = useNow(5000);
  // Rules change by use (last use, count) without an event: refresh whenever the view opens.
  useEffect(() => {
    void loadRules();
    void loadSettings();
  }, []);
  const [timeout, setTimeoutText] = useState('');
  const s = settings.data;
  const cmds = mcpCommands(s?.mcp_url, s?.mcp_token, s?.cli_path, s?.stdio_command, s?.data_dir);
  const saveTimeout = (e: FormEvent) => {
    e.preventDefault();
    const seconds = Number(timeout);
    if (Number.isFinite(seconds) && seconds >= 1) void setApprovalTimeout(Math.round(seconds * 1000)).then(() => setTimeoutText(''));
  };
  return (
    <section className="view" aria-labelledby="settings-h">
      <header className="view-head">
        <h2 id="settings-h">Rules &amp; settings</h2>
      </header>
      {s?.config_error && <ErrorBox error={`config.json is broken: ${s.config_error}`} />}
      <h3>Standing rules</h3>
      <p className="muted small">
        A rule approves matching requests without asking. “Always” on a prompt creates one; they live in config.json. A rule that reaches config.json any other
        way is proposed: it approves nothing until you confirm it here.
      </p>
      {rules.error && <ErrorBox error={rules.error} onRetry={() => void loadRules()} />}
      {rules.loading && !rules.data && <Loading what="rules" />}
      {rules.data && rules.data.length === 0 && <Empty title="No standing rules">Every mutating request asks you first.</Empty>}
      {rules.data && rules.data.length > 0 && (
        <table className="table" aria-label="Standing rules">
          <thead>
            <tr>
              <th scope="col">Rule</th>
              <th scope="col">Covers</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rules.data.map((r) => (
              <RuleRow key={r.rule_id} rule={r} now={now} />
            ))}
          </tbody>
        </table>
      )}
      <SessionGrantsSection now={now} />
      <h3>Approvals</h3>
      {settings.error && <ErrorBox error={settings.error} onRetry={() => void loadSettings()} />}
      {settings.loading && !s && <Loading what="settings" />}
      {s && (
        <form className="inline-form" onSubmit={saveTimeout}>
          <span>
            Unanswered prompts are denied after <b>{formatDuration(s.approval_timeout_ms)}</b>.
          </span>
          <label>
            New timeout (seconds)
            <input
              type="number"
              min={1}
              max={86400}
              value={timeout}
              onChange={(e) => setTimeoutText(e.target.value)}
              placeholder={String(s.approval_timeout_ms / 1000)}
            />
          </label>
          <button type="submit" className="btn" disabled={!timeout}>
            Save
          </button>
        </form>
      )}
      {host === 'browser' && <NotificationsToggle />}
      <h3>Connect an agent</h3>
      {s && (
        <div className="connect">
          {cmds.http && <CopyField label="Claude Code over HTTP" value={cmds.http} display={cmds.http.replace(s.mcp_token ?? '\u0000', '••••••••')} />}
          <CopyField label="Claude Code over stdio" value={cmds.stdio} />
          {s.mcp_url && <CopyField label="MCP endpoint" value={s.mcp_url} />}
          <p className="muted small">
            The HTTP command carries the hub's token (shown masked; Copy copies it in full). The stdio command forwards to this hub while it runs.
          </p>
        </div>
      )}
      <AgentsSection mcpUrl={s?.mcp_url} />
      <h3>Data</h3>
      {s && (
        <dl className="kv">
          <dt>Data directory</dt>
          <dd>
            <code>{s.data_dir}</code>
          </dd>
          <dt>Version</dt>
          <dd>{s.version}</dd>
        </dl>
      )}
    </section>
  );
}

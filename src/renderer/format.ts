/** Small formatting helpers shared by the views. */
import { agentInWords, type AgentNames } from '../shared/agent-label';

/** `850 ms`, `12.3 s`, `4 min 05 s`, `2 h 03 min`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const s = Math.floor(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

/** Wall-clock time `14:03:07.120`. */
export function formatClock(at: number): string {
  const d = new Date(at);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

/** Local date and 24-hour time for history entries: `2026-12-02 14:03:07`. */
export function formatDateTime(at: number): string {
  const d = new Date(at);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${formatClock(at).slice(0, 8)}`;
}

/** `3 min ago`. */
export function formatAgo(at: number, now: number): string {
  return `${formatDuration(Math.max(0, now - at))} ago`;
}

/**
 * An agent as the operator reads it: the authenticated id, the client name it declared marked as
 * declared (`default (declares "claude-code")`), so a client declaring `operator` never reads as the
 * operator.
 */
export function agentLabel(x: { agent?: string | undefined; agent_name?: string | undefined }): string {
  if (x.agent === undefined && !x.agent_name) return '—';
  return agentInWords({ agent_id: x.agent, name: x.agent_name });
}

/** The same label for the agent a prompt or an audit record names (its id, the name it declared). */
export function recordAgentLabel(a: AgentNames): string {
  return agentInWords(a);
}

/**
 * What a prompt's op will do, in words: the driver's own preview sentence when it gave one,
 * otherwise a plain sentence built from the request, so the operator never has to read JSON to
 * know what "approve" means.
 */
export function describeRequest(a: {
  agent: { agent_id?: string; name: string };
  op: string;
  channel: string;
  channel_labels: string[];
  provider_id: string;
  interaction: string;
  preview?: { text?: string };
}): string {
  if (a.preview?.text) return a.preview.text;
  const labels = a.channel_labels.length ? ` (${a.channel_labels.join(', ')})` : '';
  return `${recordAgentLabel(a.agent)} asks to run the mutating op “${a.op}” on ${a.channel}${labels} with the arguments below, through ${a.provider_id} (${a.interaction}).`;
}

/**
 * Human-readable output of the CLI (the `--json` forms are the contract payloads as they are).
 * Everything agents or panes wrote (channel names, messages, args) goes through `escapeControl`:
 * a newline would forge a log line, an ESC sequence would drive the operator's terminal.
 */
import type { AuditEntry, ChannelEntry, HubDoctor, OpDescription } from '../../hub';
import { escapeControl } from '../../../shared/escape';
import { describeAuthorization, outcomeOf } from '../../../shared/audit-record';
import { agentInWords } from '../../../shared/agent-label';
import type { DriverProcessStatus } from '../../../shared/panel-types';
import { describeAdmission, stateInWords } from '../../../shared/driver-status';

/**
 * JSON for a terminal: JSON.stringify escapes C0 but leaves DEL, C1 and U+2028/9 raw, which some
 * terminals act on; those become `\u` escapes, so the text stays valid JSON and inert.
 */
export function jsonForTerminal(value: unknown, indent?: number): string {
  return (JSON.stringify(value, null, indent) ?? '').replace(/[\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Each line of a multi-line text escaped on its own (the line breaks are ours). */
export function escapeLines(text: string): string {
  return text.split('\n').map(escapeControl).join('\n');
}

/** Writes a line (or block) to stdout. */
export function print(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

export function formatDoctor(r: HubDoctor): string {
  const lines: string[] = [];
  for (const d of r.drivers) {
    lines.push(`${d.ok ? 'ok  ' : 'FAIL'} ${d.driver}`);
    for (const l of d.lines) lines.push(`       ${l}`);
  }
  if (r.drivers.length === 0) lines.push('     no drivers are enabled');
  if (r.disabled?.length) lines.push(`off  ${r.disabled.join(', ')} (left out by hub.drivers in the config file)`);
  lines.push(`${r.config.ok ? 'ok  ' : 'FAIL'} config ${r.config.path}`);
  if (r.config.error) lines.push(`       ${r.config.error}`);
  lines.push(`${r.audit.ok ? 'ok  ' : 'FAIL'} audit ${r.audit.path}`);
  if (r.audit.error) lines.push(`       ${r.audit.error}`);
  lines.push(`${r.agents.ok ? 'ok  ' : 'FAIL'} agents ${r.agents.path}`);
  if (r.agents.error) lines.push(`       ${r.agents.error}`);
  if (r.fleet) lines.push(`${r.fleet.ok ? 'ok  ' : 'FAIL'} ${r.fleet.line}`);
  for (const w of r.warnings ?? []) lines.push(`warn ${w}`);
  lines.push(r.ok ? 'healthy' : 'NOT healthy');
  return lines.map(escapeControl).join('\n');
}

export function formatChannels(channels: ChannelEntry[]): string {
  if (channels.length === 0) return 'no channels';
  const width = Math.max(...channels.map((c) => c.channel.length));
  return channels
    .map((c) => escapeControl(`${c.channel.padEnd(width)}  ${c.labels.length ? `[${c.labels.join(', ')}]` : '-'}  ${JSON.stringify(c.detail)}`))
    .join('\n');
}

export function formatOps(ops: OpDescription[]): string {
  const width = Math.max(...ops.map((o) => o.op.length));
  return ops.map((o) => escapeControl(`${o.op.padEnd(width)}  ${o.mutating ? 'mutating ' : 'read-only'}  ${o.tool.padEnd(15)}  ${o.summary}`)).join('\n');
}

/** One audit entry as one log line, whatever its fields hold. */
export function formatEntry(e: AuditEntry): string {
  // The entry that ends a call is named by how it ended — the panel's word, the one `--state`
  // filters by — not by its kernel event: an operator's denial reads `denied`, not `failed`.
  const outcome = outcomeOf(e);
  const parts = [new Date(e.at).toISOString(), `#${e.id}`, outcome ?? (e.type === 'event' ? e.kind : e.type)];
  if (e.channel) parts.push(e.channel);
  if (e.op) parts.push(e.op);
  if (e.agent) parts.push(`agent=${e.agent.kind}:${agentInWords(e.agent)}${e.agent.user ? `(${e.agent.user})` : ''}`);
  if (e.invocation_id) parts.push(e.invocation_id);
  if (e.provider_id) parts.push(`provider=${e.provider_id}`);
  if (e.interaction) parts.push(`interaction=${e.interaction}`);
  // The panel's words for how it was authorized; they carry the reason where it is the why.
  const how = describeAuthorization(e);
  if (how) parts.push(how);
  else {
    if (e.by) parts.push(`by=${e.by}`);
    if (e.reason) parts.push(`reason=${JSON.stringify(e.reason)}`);
  }
  if (e.duration_ms !== undefined) parts.push(`${e.duration_ms}ms`);
  if (e.error_kind) parts.push(`error=${e.error_kind}: ${e.message ?? ''}`);
  if (e.detail) parts.push(`detail=${JSON.stringify(e.detail)}`);
  return escapeControl(parts.join('  '));
}

/** An out-of-process driver in a few lines: process, admission, why it is down, its last stderr. */
export function formatDriver(d: DriverProcessStatus): string {
  // An admitted driver's file is hashed when it starts: one never started has no verdict yet.
  const idle = d.state === 'idle' && d.admission === 'unchecked';
  const head = [d.id.padEnd(12), idle ? 'idle (not started yet: it starts at its first use, e.g. `uplink channels`)' : stateInWords(d.state)];
  if (d.pid !== undefined) head.push(`pid ${d.pid}`);
  if (d.protocol_version) head.push(`protocol ${d.protocol_version}`);
  head.push(`restarts ${d.restarts}`);
  if (!idle) head.push(describeAdmission(d));
  const lines = [head.join('  '), `    command  ${d.command.join(' ')}`];
  if (d.integrity.file) lines.push(`    file     ${d.integrity.file}  sha256 ${d.integrity.actual ?? d.integrity.expected ?? 'unknown'}`);
  if (d.last_exit) lines.push(`    exited   ${new Date(d.last_exit.at).toISOString()}  ${d.last_exit.reason}`);
  if (d.state === 'not_responding')
    lines.push(`    answered ${d.last_answer ? `${new Date(d.last_answer.at).toISOString()}  ${d.last_answer.method} (its last answer)` : 'nothing yet'}`);
  if (d.error) lines.push(`    error    ${d.error}`);
  if (d.admission === 'untrusted' || d.admission === 'mismatch')
    lines.push(`    trust it with \`uplink drivers trust ${d.id}\` (or in the panel's Drivers view)`);
  for (const l of d.stderr.slice(-3)) lines.push(`    stderr   ${l}`);
  return lines.map(escapeControl).join('\n');
}

export function formatDrivers(drivers: DriverProcessStatus[]): string {
  if (drivers.length === 0) return 'no out-of-process drivers (add one to external_drivers in config.json)';
  return drivers.map(formatDriver).join('\n');
}

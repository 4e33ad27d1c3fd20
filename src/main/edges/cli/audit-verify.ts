/**
 * `uplink audit verify [--json] [--witness FILE]`: checks the data directory's audit — its hash
 * chain, its signed checkpoints, and a witness file of checkpoints another hub holds — read-only,
 * beside a running hub or of a stopped one. Exit 0 when whole, 1 when broken, 2 when it cannot
 * be checked (usage, no audit, a file it cannot open).
 */
import { dataPaths, HubError, resolveDataDir, verifyAudit } from '../../hub';
import type { AuditVerifyReport } from '../../hub';
import { resolve } from 'node:path';
import { escapeControl } from '../../../shared/escape';
import { flag, usage } from './args';
import type { ParsedArgs } from './args';
import { print } from './format';

export async function runAuditCommand(args: ParsedArgs): Promise<number> {
  const [, sub, ...rest] = args.positionals;
  if (sub !== 'verify')
    throw usage(sub === undefined ? 'audit needs a subcommand' : `unknown audit command "${sub}"`, 'use `uplink audit verify [--json] [--witness FILE]`');
  if (rest.length) throw usage(`too many arguments for audit verify (expected none)`);
  const witness = flag(args, 'witness');
  if (witness === '') throw usage('--witness needs a file path');
  let report: AuditVerifyReport;
  try {
    report = await verifyAudit({ path: dataPaths(resolveDataDir()).audit, ...(witness ? { witness: [resolve(witness)] } : {}) });
  } catch (e) {
    if (!(e instanceof HubError)) throw e;
    process.stderr.write(`${e.rendered}\n`);
    return 2;
  }
  if (args.flags.has('json')) print(JSON.stringify(report));
  else print(formatReport(report));
  return report.ok ? 0 : 1;
}

/** One line per finding, then one saying what was checked. */
export function formatReport(r: AuditVerifyReport): string {
  const lines = r.findings.map((f) => escapeControl(`broken ${f.kind}: ${f.message}`));
  const sources = [`${r.checkpoints.database} in the database`, `${r.checkpoints.side_file} in the side file`];
  if (r.checkpoints.witness) sources.push(`${r.checkpoints.witness} from the witness`);
  const checked = `${r.records} record${r.records === 1 ? '' : 's'}, checkpoints: ${sources.join(', ')}`;
  lines.push(
    escapeControl(
      r.ok
        ? `ok audit ${r.path}: the chain is whole (${checked})`
        : `broken audit ${r.path}: ${r.findings.length === 1 ? 'one finding' : `${r.findings.length} findings`} (${checked}) — hint: see docs/audit.md for what each means`,
    ),
  );
  return lines.join('\n');
}

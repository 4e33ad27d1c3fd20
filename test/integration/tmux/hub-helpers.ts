/**
 * Builds, once per worker, one bundle with the CLI and the tmux fixture drivers (see
 * test/fixtures/tmux-cli-entry.ts) and a launcher for it, for the CLI/MCP tests.
 */
import { existsSync } from 'node:fs';
import { buildCliWithDrivers, writeConfirmedConfig, type TestBuild } from '../../fixtures/hub-build';

let built: Promise<TestBuild> | undefined;

/**
 * A TestBuild whose launcher and `drivers` module are the same tmux bundle. Rebuilt when the
 * files are gone, so call it before each use.
 */
export async function buildTmuxHub(): Promise<TestBuild> {
  const current = await built;
  if (current && (!existsSync(current.launcher) || !existsSync(current.drivers))) built = undefined;
  built ??= buildCliWithDrivers('test/fixtures/tmux-cli-entry.ts', 'tmux');
  return built;
}

/** Writes `<data dir>/config.json`. */
export function writeConfig(dataDir: string, config: Record<string, unknown>): void {
  writeConfirmedConfig(dataDir, config);
}

/** Standing rules that approve every tmux op (the embedded hub has no panel). */
export const APPROVE_TMUX = { approvals: { rules: [{ id: 'tmux-all', channel: 'tmux:*', op: '*' }] } };

/**
 * The tmux driver: cross-pane messaging and pane ops, at behaviour parity with
 * cc-uplink's tmux driver. `createTmuxDriver` is what the hub enables; `tmuxConfigSchema` is the
 * schema of the config file's `tmux` section; `tmuxSnippet` is the `uplink tmux-snippet` text.
 */
import type { Driver } from '../contract';
import type { TmuxDriverOptions } from './core';
import { buildTmuxDriver } from './driver';

export { tmuxConfigSchema, type TmuxConfig, type TmuxWriteGrant } from './config';
export { tmuxSnippet } from './snippet';
export { TIERS, type Tier } from './policy';
export type { TmuxDriverOptions };

/** Creates the tmux driver (id `tmux`, kind `both`). Nothing connects until the first call. */
export function createTmuxDriver(options: TmuxDriverOptions = {}): Driver {
  return buildTmuxDriver(options);
}

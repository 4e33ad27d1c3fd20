/**
 * `uplink demo`: stages a private scene (stage.ts), serves the real hub, MCP and panel on it
 * (`uplink serve`'s startup), and plays the story (story.ts) with a scripted agent while the panel
 * shows a presenter strip. Everything the stage started goes when the demo does.
 *
 * The demo's hub has a data dir of its own: a temporary one in the stage, or `<data dir>/demo-stage`
 * when `UPLINK_DATA_DIR` names one (so its audit outlives the demo). The operator's own config,
 * audit and agents are never written, and a hub serving that data dir is left alone: the demo
 * refuses before it starts or writes anything.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Emitter } from '../../../shared/emitter';
import type { Disposer } from '../../../shared/panel-api';
import type { DemoStep } from '../../../shared/panel-types';
import type { PanelPresenter } from '../panel';
import { HubError } from '../../hub';
import type { LoadDrivers } from '../../hub';
import { startServing } from '../cli/serve';
import { print } from '../cli/format';
import { findRunningHub } from '../http/hub-json';
import { openPanel, panelOpener } from './open-panel';
import { DEMO_STAGE_DIR, demoRoot, startStage, stagePids } from './stage';
import type { Stage } from './stage';
import { namePanes, playStory, STORY } from './story';

export { STORY } from './story';

export interface DemoOptions {
  port: number;
  exitWhenDone: boolean;
  headless: boolean;
  /** `UPLINK_DATA_DIR` when set: the demo's hub runs in its `demo-stage` directory. Else the stage's own temporary one. */
  dataDir?: string;
  /** The hub's drivers: the product's unless given. */
  loadDrivers?: LoadDrivers;
}

/**
 * How long a step that asks the operator nothing stays on the strip (discovering, reading): long
 * enough to read it, so the story opens at step 1 rather than at the first prompt.
 */
export const STEP_DWELL_MS = 4000;

/** `uplink demo --list`: no panes yet, so they go by their labels. */
export function listSteps(): string {
  const names = { builder: 'the builder pane', reviewer: 'the reviewer pane' };
  return STORY.map((s, i) => `${i + 1}. ${s.title} — ${namePanes(s.why, names)}`).join('\n');
}

/** The presenter strip's source: the latest step, pushed to every open panel. */
function createPresenter(): PanelPresenter & { set(step: DemoStep): void } {
  let current: DemoStep | undefined;
  const steps = new Emitter<DemoStep>();
  return {
    current: () => current,
    subscribe: (listener): Disposer => steps.on(listener),
    set(step) {
      current = step;
      steps.emit(step);
    },
  };
}

/** The demo's own data dir inside the user's: the demo writes there, never beside it. */
export function demoDataDir(dataDir: string): string {
  return join(dataDir, DEMO_STAGE_DIR);
}

/**
 * Refuses while a hub serves the user's data dir (or an earlier demo its stage): the demo runs a
 * hub of its own and has no business with that one. Checked before anything is started or written.
 */
async function refuseServedDataDir(dataDir: string): Promise<void> {
  for (const dir of [dataDir, demoDataDir(dataDir)]) {
    const running = await findRunningHub(dir);
    if (running)
      throw new HubError('core', 'Unavailable', `a hub (pid ${running.pid}) already serves ${dir} at ${running.url}; the demo changed nothing`, {
        hint: 'the demo runs a hub of its own: stop that hub first, or unset UPLINK_DATA_DIR to run the demo on a temporary data directory',
      });
  }
}

/** Runs the demo; resolves with the exit code (0 when the story completed). */
export async function runDemo(options: DemoOptions): Promise<number> {
  if (options.dataDir) await refuseServedDataDir(options.dataDir);
  const stopping = new AbortController();
  let signalled: NodeJS.Signals | undefined;
  const onSignal = (sig: NodeJS.Signals): void => {
    signalled = sig;
    stopping.abort();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // A last resort for an exit no one planned (an uncaught error): kill the stage synchronously.
  let stage: Stage | undefined;
  const lastResort = (): void => {
    if (!stage) return;
    for (const pid of stagePids(stage.id)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  };
  process.once('exit', lastResort);
  const presenter = createPresenter();
  let served: Awaited<ReturnType<typeof startServing>> | undefined;
  try {
    stage = await startStage({ headless: options.headless, ...(options.dataDir ? { dataDir: demoDataDir(options.dataDir) } : {}) });
    print(
      `uplink demo: staged a private tmux server, ${stage.display.private ? `a private display (Xvfb ${stage.display.DISPLAY})` : `your display ${stage.display.DISPLAY}`} and the demo app`,
    );
    served = await startServing({ dataDir: stage.dataDir, port: options.port, presenter, loadDrivers: options.loadDrivers });
    const { hub, server } = served;
    const opener = panelOpener(!stage.display.private, demoRoot());
    // The Uplink app spends the one-time code: printing it then would only offer a dead link.
    if (opener.kind === 'electron') print(`  panel: opening in the Uplink app (a browser link: \`uplink panel-url\` with UPLINK_DATA_DIR=${stage.dataDir})`);
    else print(`  panel: ${server.panelUrl}  (open it to start the story; \`uplink panel-url\` with UPLINK_DATA_DIR=${stage.dataDir} prints a fresh one)`);
    print(`  MCP:   ${server.mcpUrl}`);
    openPanel(opener, server.panelUrl, demoRoot());
    presenter.set({
      step: 0,
      total: STORY.length,
      title: 'Waiting for the panel',
      why: 'The story starts when a panel is open: every change an agent asks for waits for you here.',
      look: 'This strip.',
      state: 'running',
    });
    const panelAttached = async (): Promise<void> => {
      while (hub.panelsAttached() === 0 && !stopping.signal.aborted) await new Promise((r) => setTimeout(r, 200));
    };
    await panelAttached();
    let code = 0;
    if (!stopping.signal.aborted) {
      const token = readFileSync(join(stage.dataDir, 'token'), 'utf8').trim();
      try {
        const result = await playStory(server.mcpUrl, token, stage.app.pid, {
          step: (s) => presenter.set({ ...s, total: STORY.length, state: s.step === STORY.length ? 'done' : 'running' }),
          panelAttached,
          // Paced only once a panel shows it: the story starts when one is attached.
          dwell: () =>
            new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, STEP_DWELL_MS);
              stopping.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
            }),
          log: (line) => print(line),
          signal: stopping.signal,
        });
        const events = stage.app.events();
        const saved = events.filter((e) => e.event === 'saved').pop();
        const padClicks = events.filter((e) => e.event === 'pad-click').length;
        print(
          `uplink demo: the app itself reports: ${saved ? `saved ${String(saved.name)} <${String(saved.email)}>` : 'form not saved'}, ${padClicks} click(s) in the sketch pad`,
        );
        print(
          `uplink demo: the story is complete (${result.acts.length} actions asked for). \`uplink log\` with UPLINK_DATA_DIR=${stage.dataDir} shows the audit${stage.ownDataDir ? ' until the demo exits' : ''}.`,
        );
      } catch (error) {
        if (!stopping.signal.aborted) {
          const why = error instanceof Error ? error.message : String(error);
          const stopped = new HubError('core', 'Upstream', `the demo's story stopped: ${why}`, {
            hint: "the stage is still up: look at the panel's timeline, or run `uplink demo --headless` again",
          });
          process.stderr.write(`${stopped.rendered}\n`);
          presenter.set({
            ...(presenter.current() ?? { step: 0, total: STORY.length, title: '', why: '', look: '' }),
            state: 'done',
            summary: `The story stopped: ${why}`,
          });
          code = 1;
        }
      }
    }
    if (!options.exitWhenDone && !stopping.signal.aborted) {
      print('uplink demo: Ctrl-C ends the demo and removes everything it started.');
      await new Promise<void>((resolve) => stopping.signal.addEventListener('abort', () => resolve(), { once: true }));
    }
    return signalled ? 128 + (signalled === 'SIGINT' ? 2 : 15) : code;
  } finally {
    if (served) {
      await served.hub.close();
      await served.server.close();
    }
    await stage?.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('exit', lastResort);
  }
}

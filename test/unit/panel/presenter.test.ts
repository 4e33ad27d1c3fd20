/**
 * The presenter strip's stream: a panel session hears the demo's current step when it opens and
 * every step after, checked against the event's schema; it stops hearing them once closed, and a
 * hub without a demo sends none.
 */
import { describe, expect, it } from 'vitest';
import { createBroadcast, openPanelSession } from '../../../src/main/edges/panel';
import type { PanelPresenter } from '../../../src/main/edges/panel';
import { checkEvent } from '../../../src/main/edges/panel/validate';
import type { PanelEventName } from '../../../src/shared/panel-api';
import type { DemoStep } from '../../../src/shared/panel-types';
import { createFakeHub } from './fake-hub';

function presenter(first?: DemoStep): PanelPresenter & { set(step: DemoStep): void } {
  let current = first;
  const listeners = new Set<(s: DemoStep) => void>();
  return {
    current: () => current,
    subscribe: (l) => (listeners.add(l), () => void listeners.delete(l)),
    set(step) {
      current = step;
      for (const l of listeners) l(step);
    },
  };
}

const step = (n: number): DemoStep => ({ step: n, total: 8, title: `t${n}`, why: 'w', look: 'l', window_channel: 'desktop:0x1', state: 'running' });

function open(p?: PanelPresenter) {
  const heard: Array<{ event: PanelEventName; payload: unknown }> = [];
  const s = openPanelSession(
    createFakeHub(),
    { version: '0.1.0', user: 'alice', ...(p ? { presenter: p } : {}) },
    createBroadcast(),
    (event, payload) => heard.push({ event, payload }),
    Date.now(),
  );
  const steps = () => heard.filter((h) => h.event === 'demoStep').map((h) => h.payload as DemoStep);
  return { s, steps };
}

describe('the demo presenter stream', () => {
  it('sends the current step on open and each new one after, until the session closes', () => {
    const p = presenter(step(2));
    const { s, steps } = open(p);
    p.set(step(3));
    expect(steps().map((x) => x.step)).toEqual([2, 3]);
    for (const x of steps()) expect(checkEvent('demoStep', x)).toMatchObject({ ok: true });
    expect(checkEvent('demoStep', { step: 1 })).toMatchObject({ ok: false });
    s.close();
    p.set(step(4));
    expect(steps().map((x) => x.step)).toEqual([2, 3]);
  });

  it('sends nothing without a demo', () => {
    expect(open().steps()).toEqual([]);
    expect(open(presenter()).steps()).toEqual([]);
  });
});

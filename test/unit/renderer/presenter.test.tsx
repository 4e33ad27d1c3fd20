// @vitest-environment jsdom
/**
 * The presenter strip follows the demo's `demoStep` events, and shows the demo window live; a
 * window's live view asks for frames at least twice a second while the panel is visible, one at a
 * time, and stops while it is hidden or gone.
 */
import { act, cleanup, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DemoStep } from '../../../src/shared/panel-types';
import { App } from '../../../src/renderer/App';
import { LiveWindow } from '../../../src/renderer/components/LiveWindow';
import { ChannelPage } from '../../../src/renderer/components/ChannelPage';
import { selectChannel } from '../../../src/renderer/actions';
import { startFakePanel } from './fake-api';
import type { FakeApi } from './fake-api';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

let fake: FakeApi;
let stop: () => void;
let hidden = false;
beforeEach(() => {
  ({ fake, stop } = startFakePanel({ previewChannel: { image_png: PNG } }));
  hidden = false;
  Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => (hidden ? 'hidden' : 'visible') });
});
afterEach(() => {
  cleanup();
  stop();
  vi.useRealTimers();
});

const frames = () => fake.calls.filter((c) => c.method === 'previewChannel').length;
const step = (n: number, extra: Partial<DemoStep> = {}): DemoStep => ({
  step: n,
  total: 8,
  title: `Title ${n}`,
  why: `Why ${n}`,
  look: `Look ${n}`,
  state: 'running',
  ...extra,
});

describe('the presenter strip', () => {
  it('is absent outside a demo, then shows each step with its why, where to look and the window live', async () => {
    render(<App />);
    expect(screen.queryByRole('region', { name: 'Demo presenter' })).toBeNull();
    act(() => fake.emit('demoStep', step(3, { window_channel: 'desktop:0x1' })));
    const strip = screen.getByRole('region', { name: 'Demo presenter' });
    expect(strip.textContent).toContain('Step 3 of 8');
    expect(strip.textContent).toContain('Why 3');
    expect(strip.textContent).toContain('Look 3');
    expect(await screen.findByRole('img', { name: 'Live view of desktop:0x1' })).not.toBeNull();
    act(() => fake.emit('demoStep', step(8, { state: 'done', summary: 'all done' })));
    expect(strip.textContent).toContain('story complete');
    expect(strip.textContent).toContain('all done');
  });
});

describe('a live window', () => {
  it('asks for at least 2 frames a second while visible, none while hidden, none once unmounted', async () => {
    vi.useFakeTimers();
    const view = render(<LiveWindow channel="desktop:0x1" />);
    await act(async () => vi.advanceTimersByTimeAsync(2000));
    const visible = frames();
    expect(visible).toBeGreaterThanOrEqual(4);
    expect(visible).toBeLessThanOrEqual(7);
    hidden = true;
    await act(async () => vi.advanceTimersByTimeAsync(1000));
    const paused = frames();
    await act(async () => vi.advanceTimersByTimeAsync(2000));
    expect(frames()).toBe(paused);
    hidden = false;
    await act(async () => {
      document.dispatchEvent(new Event('visibilitychange'));
      await vi.advanceTimersByTimeAsync(1000);
    });
    expect(frames()).toBeGreaterThan(paused);
    view.unmount();
    const gone = frames();
    await act(async () => vi.advanceTimersByTimeAsync(2000));
    expect(frames()).toBe(gone);
  });

  it('never has two frames in flight: a slow screenshot lowers the rate', async () => {
    vi.useFakeTimers();
    let inFlight = 0;
    let most = 0;
    fake.replies.previewChannel = () =>
      new Promise((r) => {
        most = Math.max(most, ++inFlight);
        setTimeout(() => (inFlight--, r({ image_png: PNG })), 900);
      });
    render(<LiveWindow channel="desktop:0x1" />);
    await act(async () => vi.advanceTimersByTimeAsync(3000));
    expect(most).toBe(1);
    expect(frames()).toBeLessThanOrEqual(4);
  });

  it("is what a window's channel page shows, where a pane's page keeps its preview", async () => {
    const op = (name: string) => ({ op: name, summary: name, mutating: false, params_schema: {}, result_schema: {} });
    fake.replies.describeChannel = (p: unknown) => {
      const channel = (p as { channel: string }).channel;
      return {
        channel: { channel, labels: [], driver: channel.split(':')[0] },
        ops: channel.startsWith('desktop:') ? [op('observe'), op('screenshot')] : [op('read')],
      };
    };
    fake.replies.previewChannel = { image_png: PNG, text: 'hello' };
    act(() => selectChannel('desktop:0x1'));
    const view = render(<ChannelPage channel="desktop:0x1" />);
    expect(await screen.findByRole('img', { name: 'Live view of desktop:0x1' })).not.toBeNull();
    expect(screen.queryByRole('region', { name: 'Preview' })).toBeNull();
    view.unmount();
    act(() => selectChannel('tmux:%1'));
    render(<ChannelPage channel="tmux:%1" />);
    expect(await screen.findByRole('region', { name: 'Preview' })).not.toBeNull();
    expect(screen.queryByRole('region', { name: 'Live view' })).toBeNull();
  });
});

/** An in-memory PanelApi for renderer tests: records calls, lets a test emit events. */
import { cleanup } from '@testing-library/react';
import { afterEach, beforeEach, vi } from 'vitest';
import type { PanelApi, PanelEventName, PanelEvents } from '../../../src/shared/panel-api';
import { EventHub, createPanelProxy } from '../../../src/shared/panel-proxy';
import { startPanel } from '../../../src/renderer/actions';
import { getInitialState, useStore } from '../../../src/renderer/store';

export interface FakeApi {
  api: PanelApi;
  calls: Array<{ method: string; params: unknown }>;
  emit<E extends PanelEventName>(event: E, payload: PanelEvents[E]): void;
  /** Replies per method; a function gets the params. */
  replies: Record<string, unknown>;
  listeners(): number;
}

export function createFakeApi(replies: FakeApi['replies'] = {}): FakeApi {
  const events = new EventHub();
  const fake: FakeApi = {
    calls: [],
    replies: {
      listPendingApprovals: [],
      listChannels: { channels: [], health: [], errors: [] },
      getSettings: { approval_timeout_ms: 120_000, data_dir: '/data', version: '0.1.0' },
      listRules: [],
      listProviders: [],
      driverStatus: [],
      driverTrace: [],
      queryTimeline: { events: [], next_before: null },
      decide: { accepted: true, granted: true },
      fleetStatus: { enabled: false, members: [] },
      fleetTimeline: { entries: [], next_before: null },
      ...replies,
    },
    api: undefined as unknown as PanelApi,
    emit: (event, payload) => events.emit(event, payload),
    listeners: () => events.size(),
  };
  fake.api = createPanelProxy({
    async invoke(method, params) {
      fake.calls.push({ method, params });
      const r = fake.replies[method];
      const value = typeof r === 'function' ? await (r as (p: unknown) => unknown)(params) : r;
      if (value instanceof Error) throw value;
      return structuredClone(value);
    },
    subscribe: (event, listener) => events.on(event, listener),
  });
  return fake;
}

/** A fresh store and a panel started over a new fake API; `stop()` disposes its subscriptions. */
export function startFakePanel(replies?: FakeApi['replies']): { fake: FakeApi; stop: () => void } {
  useStore.setState(getInitialState(), true);
  const fake = createFakeApi(replies);
  return { fake, stop: startPanel(fake.api, 'browser') };
}

/**
 * Gives every test of the file a fresh store and panel over a new fake API (handed to `take`),
 * and afterwards unmounts what it rendered, disposes the panel and restores real timers.
 */
export function useFakePanel(take: (fake: FakeApi) => void = () => undefined): void {
  let stop: () => void = () => undefined;
  beforeEach(() => {
    const started = startFakePanel();
    stop = started.stop;
    take(started.fake);
  });
  afterEach(() => {
    cleanup();
    stop();
    vi.useRealTimers();
  });
}

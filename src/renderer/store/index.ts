/**
 * The panel's one store, built from slices. Components read it through narrow selectors
 * (`useShallow` where a selector returns several fields); only `../actions.ts` writes to it.
 */
import { create } from 'zustand';
import {
  createApprovalsSlice,
  createChannelsSlice,
  createConnectionSlice,
  createProvidersSlice,
  createSettingsSlice,
  createTimelineSlice,
  createUiSlice,
} from './slices';
import type { PanelState } from './slices';

export const useStore = create<PanelState>()((...a) => ({
  ...createConnectionSlice(...a),
  ...createUiSlice(...a),
  ...createApprovalsSlice(...a),
  ...createTimelineSlice(...a),
  ...createChannelsSlice(...a),
  ...createProvidersSlice(...a),
  ...createSettingsSlice(...a),
}));

/** A fresh initial state (tests reset with `useStore.setState(getInitialState(), true)`). */
export function getInitialState(): PanelState {
  const a = [useStore.setState, useStore.getState, useStore] as const;
  return {
    ...createConnectionSlice(...a),
    ...createUiSlice(...a),
    ...createApprovalsSlice(...a),
    ...createTimelineSlice(...a),
    ...createChannelsSlice(...a),
    ...createProvidersSlice(...a),
    ...createSettingsSlice(...a),
  };
}

export type { PanelState, View, Loadable } from './slices';
export { VIEWS } from './slices';

/**
 * The panel's one store, built from slices. Components read it through narrow selectors
 * (`useShallow` where a selector returns several fields); only `../actions.ts` writes to it.
 */
import { create } from 'zustand';
import type { StateCreator } from 'zustand';
import {
  createApprovalsSlice,
  createChannelsSlice,
  createConnectionSlice,
  createDriversSlice,
  createFleetSlice,
  createProvidersSlice,
  createSettingsSlice,
  createTimelineSlice,
  createUiSlice,
} from './slices';
import type { PanelState } from './slices';

/** Every slice, composed: the store's creator, and the source of a fresh initial state. */
const allSlices: StateCreator<PanelState> = (...a) => ({
  ...createConnectionSlice(...a),
  ...createUiSlice(...a),
  ...createApprovalsSlice(...a),
  ...createTimelineSlice(...a),
  ...createChannelsSlice(...a),
  ...createProvidersSlice(...a),
  ...createDriversSlice(...a),
  ...createFleetSlice(...a),
  ...createSettingsSlice(...a),
});

export const useStore = create<PanelState>()(allSlices);

/** A fresh initial state (tests reset with `useStore.setState(getInitialState(), true)`). */
export function getInitialState(): PanelState {
  return allSlices(useStore.setState, useStore.getState, useStore);
}

export type { PanelState, View, Loadable } from './slices';
export { VIEWS } from './slices';

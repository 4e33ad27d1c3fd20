/**
 * The store's slices (zustand slices pattern): plain state plus synchronous setters. Anything
 * that talks to the hub lives in `../actions.ts`, which calls these setters.
 */
import type { StateCreator } from 'zustand';
import type {
  ApprovalResolved,
  ApprovalRule,
  SessionGrantEntry,
  ChannelDescription,
  ChannelList,
  ChannelPreview,
  Decision,
  DriverProcessStatus,
  DriverTraceEntry,
  DemoStep,
  FleetTimelineEntry,
  FleetView,
  HubStatus,
  InvocationDetail,
  PanelSettings,
  PendingApproval,
  ProviderEntry,
  SelectionExplanation,
  TimelineFilter,
} from '../../shared/panel-types';
import type { ConnectionState } from '../../shared/panel-ws';
import type { TimelineEvent } from '../../shared/audit-record';
import type { InvocationRow } from './timeline-model';

/** A value being fetched: data, a loading flag and the last error. */
export interface Loadable<T> {
  data?: T;
  loading: boolean;
  error?: string;
}
export const idle = <T>(): Loadable<T> => ({ loading: false });

export type View = 'approvals' | 'timeline' | 'fleet' | 'channels' | 'providers' | 'drivers' | 'settings';
export const VIEWS: readonly View[] = ['approvals', 'timeline', 'fleet', 'channels', 'providers', 'drivers', 'settings'];

export interface ConnectionSlice {
  connection: { state: ConnectionState; detail?: string; status?: HubStatus; host: 'electron' | 'browser' };
}

export interface UiSlice {
  view: View;
  selectedChannel?: string;
  toasts: Array<{ id: number; kind: 'info' | 'error'; text: string }>;
  /** A running demo's current step (the presenter strip); absent outside demos. */
  demo?: DemoStep;
}

/** A resolved prompt with what it asked (kept from the pending prompt it ended). */
export type RecentDecision = ApprovalResolved & Partial<Pick<PendingApproval, 'op' | 'channel' | 'agent' | 'invocation_id' | 'hub'>>;

export interface ApprovalsSlice {
  approvals: {
    pending: PendingApproval[];
    loading: boolean;
    error?: string;
    /** The decision sent per approval: the buttons stay disabled once one is set. */
    deciding: Record<string, Decision>;
    /** Recently resolved, shown briefly so the operator sees what happened. */
    resolved: RecentDecision[];
    /** While you were away: what ended unattended (auto-denied, timed out, withdrawn, lost) since this browser's panel was last connected. */
    away: TimelineEvent[];
  };
}

export interface TimelineSlice {
  timeline: {
    rows: Map<string, InvocationRow>;
    order: string[];
    version: number;
    filter: TimelineFilter;
    follow: boolean;
    selected?: string;
    detail: Loadable<InvocationDetail>;
    /** Cursor to page older history from; null at the start of history. */
    before: number | null;
    historyLoaded: boolean;
    loadingOlder: boolean;
    error?: string;
    /** The hub's search of the whole audit, shown instead of the rows while the filter has text. */
    search?: TimelineSearchState;
  };
}

/** A search's results: whole calls, newest pages appended as the operator loads more. */
export interface TimelineSearchState {
  /** The filter it ran with. */
  filter: TimelineFilter;
  rows: Map<string, InvocationRow>;
  order: string[];
  version: number;
  /** Where the next page starts; null once the whole audit is searched. */
  before: number | null;
  loading: boolean;
  error?: string;
}

export interface ChannelsSlice {
  channels: {
    list: Loadable<ChannelList>;
    described: Record<string, Loadable<ChannelDescription>>;
    previews: Record<string, Loadable<ChannelPreview>>;
  };
}

export interface ProvidersSlice {
  providers: { list: Loadable<ProviderEntry[]>; explanation: Loadable<SelectionExplanation> };
}

export interface DriversSlice {
  /** Out-of-process drivers and, per driver, the protocol trace read so far (oldest first, bounded). */
  drivers: { list: Loadable<DriverProcessStatus[]>; trace: Record<string, DriverTraceEntry[]> };
}

export interface FleetSlice {
  fleet: {
    status: Loadable<FleetView>;
    /** The merged timeline for `hub` (all hubs when absent), newest first, bounded. */
    entries: FleetTimelineEntry[];
    hub?: string;
    /** Cursor to page older entries from; null at the start of history. */
    before: number | null;
    loaded: boolean;
    loadingOlder: boolean;
    error?: string;
  };
}

export interface SettingsSlice {
  settings: { settings: Loadable<PanelSettings>; rules: Loadable<ApprovalRule[]>; sessionGrants: Loadable<SessionGrantEntry[]> };
}

export type PanelState = ConnectionSlice &
  UiSlice &
  ApprovalsSlice &
  TimelineSlice &
  ChannelsSlice &
  ProvidersSlice &
  DriversSlice &
  FleetSlice &
  SettingsSlice;
type Slice<T> = StateCreator<PanelState, [], [], T>;

export const createConnectionSlice: Slice<ConnectionSlice> = () => ({ connection: { state: 'connecting', host: 'browser' } });
export const createUiSlice: Slice<UiSlice> = () => ({ view: 'approvals', toasts: [] });
export const createApprovalsSlice: Slice<ApprovalsSlice> = () => ({
  approvals: { pending: [], loading: true, deciding: {}, resolved: [], away: [] },
});
export const createTimelineSlice: Slice<TimelineSlice> = () => ({
  timeline: {
    rows: new Map(),
    order: [],
    version: 0,
    filter: {},
    follow: true,
    detail: idle(),
    before: null,
    historyLoaded: false,
    loadingOlder: false,
  },
});
export const createChannelsSlice: Slice<ChannelsSlice> = () => ({ channels: { list: { loading: true }, described: {}, previews: {} } });
export const createProvidersSlice: Slice<ProvidersSlice> = () => ({ providers: { list: { loading: true }, explanation: idle() } });
export const createDriversSlice: Slice<DriversSlice> = () => ({ drivers: { list: { loading: true }, trace: {} } });
export const createFleetSlice: Slice<FleetSlice> = () => ({
  fleet: { status: { loading: true }, entries: [], before: null, loaded: false, loadingOlder: false },
});
export const createSettingsSlice: Slice<SettingsSlice> = () => ({
  settings: { settings: { loading: true }, rules: { loading: true }, sessionGrants: { loading: true } },
});

/** Channels: `<driver>:<addr>` routing, the checks before a call, and drivers as kernel providers. */
export { CAPABILITY_VERSION, DriverProvider, capabilitySpec, providerIdFor } from './driver-provider';
export { checkCall } from './call-checks';
export type { CheckedCall } from './call-checks';
export { ChannelRegistry, withDeadline } from './registry';
export { DriverProviders } from './providers';

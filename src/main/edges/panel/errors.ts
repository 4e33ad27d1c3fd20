/** Turns anything thrown by the hub into the one-line text the operator reads. */
import { DriverError, driverOfChannel, renderDriverError } from '../../hub';
import { clipName } from '../../../shared/escape';

/** The rendered `uplink error […]` line for a hub/driver error; a fixed line for anything else. */
export function renderError(channel: string | undefined, error: unknown): string {
  // The driver part of a channel the panel sent, as every line names it: never more than a name.
  const driver = clipName(driverOfChannel(channel));
  if (error && typeof error === 'object' && 'rendered' in error && typeof (error as { rendered: unknown }).rendered === 'string') {
    return (error as { rendered: string }).rendered;
  }
  if (error instanceof DriverError) return renderDriverError(driver, error);
  return renderDriverError(driver, {
    kind: 'Upstream',
    message: 'the hub failed unexpectedly',
    hint: 'see the hub log; retry, or run `uplink doctor`',
  });
}

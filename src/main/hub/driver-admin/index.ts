/** Driver admin: which drivers a hub runs, external drivers and their admission. */
export { loadDrivers, sectionSchema } from './default';
export type { DriverSet, LoadDrivers, SectionGetter } from './default';
export { createExternalDrivers, externalEntries, externalStatus, trustEntry } from './external';
export type { CheckName, CheckOptions, CheckResult } from './check';
export { ExternalDriverAdmin } from './admin';

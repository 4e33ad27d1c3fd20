/** Public surface of the kernel (the sua runtime). */
export * from './types';
export { Runtime } from './runtime';
export { SoftwareUseError } from './errors';
export { isValidIdentifier } from './identifier';
export { defaultPolicy } from './policy';
export { describeSchemaError, inputValidator, schemaValidator, strictSchemaError } from './registry';

/** Public surface of the kernel (the sua runtime). */
export * from './types';

import type { Plugin } from 'esbuild';
export declare const BUNDLED: RegExp;
export declare const externalPackages: Plugin;

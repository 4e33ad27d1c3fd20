import { defineConfig } from 'vite';
import type { Plugin } from 'vite';
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';

/**
 * The packaged app's fuses turn off file://'s extra privileges, and then every CORS request from
 * a file:// page fails: module scripts and `crossorigin` stylesheets are CORS requests, so the
 * window would stay blank. The renderer is therefore one classic, deferred script (an IIFE
 * bundle) and plain stylesheet links, which load from file:// and from `uplink serve` alike.
 */
export function classicScripts(html: string): string {
  return html
    .replace(/<script type="module" crossorigin src=/g, '<script defer src=')
    .replace(/<script type="module" src=/g, '<script defer src=')
    .replace(/(<link rel="stylesheet") crossorigin/g, '$1');
}

const classicScriptsPlugin = (): Plugin => ({
  name: 'uplink-classic-scripts',
  apply: 'build',
  enforce: 'post',
  transformIndexHtml: { order: 'post', handler: classicScripts },
});

// The renderer is one static bundle served two ways: from file:// in Electron and by
// `uplink serve` over loopback HTTP. `base: './'` keeps asset URLs relative for both.
export default defineConfig({
  root: fileURLToPath(new URL('./src/renderer', import.meta.url)),
  base: './',
  plugins: [react(), classicScriptsPlugin()],
  build: {
    outDir: fileURLToPath(new URL('./dist/renderer', import.meta.url)),
    emptyOutDir: true,
    // No inline scripts or styles: the CSP allows only 'self'.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: true,
    target: 'chrome120',
    // One stylesheet file (an IIFE would otherwise inject a <style> element, which the CSP blocks).
    cssCodeSplit: false,
    rollupOptions: { output: { format: 'iife' } },
  },
});

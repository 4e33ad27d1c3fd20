/**
 * Serves the built renderer (`dist/renderer`) with a strict CSP: our own scripts and styles only,
 * images from us or `data:` (screenshots), the WebSocket back to this origin, nothing remote.
 */
import { createReadStream, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};

/** The Content-Security-Policy for a page served from `origin` (e.g. `http://127.0.0.1:7345`). */
export function panelCsp(origin: string): string {
  const ws = origin.replace(/^http/, 'ws');
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src 'self' ${ws}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ');
}

/** Security headers for every panel response. */
export function securityHeaders(origin: string): Record<string, string> {
  return {
    'Content-Security-Policy': panelCsp(origin),
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), usb=(), serial=(), hid=()',
  };
}

/** Resolves a URL path inside `root`, or undefined when it escapes or does not exist. */
export function resolveStatic(root: string, pathname: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return undefined;
  }
  if (decoded.includes('\0')) return undefined;
  const rel = decoded === '/' || decoded === '' ? 'index.html' : decoded.replace(/^\/+/, '');
  const full = normalize(join(root, rel));
  if (full !== root && !full.startsWith(root.endsWith(sep) ? root : root + sep)) return undefined;
  try {
    return statSync(full).isFile() ? full : undefined;
  } catch {
    return undefined;
  }
}

/** Serves one static file; answers 404 with a hint when the renderer is not built. */
export function serveStatic(root: string, req: IncomingMessage, res: ServerResponse, pathname: string, origin: string): void {
  const headers = securityHeaders(origin);
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { ...headers, Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' });
    res.end('method not allowed\n');
    return;
  }
  const file = resolveStatic(root, pathname);
  if (!file) {
    const built = resolveStatic(root, '/index.html') !== undefined;
    res.writeHead(404, { ...headers, 'Content-Type': 'text/plain; charset=utf-8' });
    res.end(built ? 'not found\n' : 'uplink error [core:Unavailable]: the panel is not built — hint: run `npm run build`\n');
    return;
  }
  const type = TYPES[extname(file)] ?? 'application/octet-stream';
  // index.html must never be cached (it names the hashed assets); hashed assets may be.
  const cache = file.endsWith('index.html') ? 'no-store' : 'public, max-age=31536000, immutable';
  res.writeHead(200, { ...headers, 'Content-Type': type, 'Cache-Control': cache });
  if (req.method === 'HEAD') return void res.end();
  createReadStream(file)
    .on('error', () => res.destroy())
    .pipe(res);
}

/**
 * A test-only HTTP proxy in front of `uplink serve` for MCP clients that cannot send a header of
 * their own (the conformance suite): it adds `Authorization: Bearer <token>` and otherwise passes
 * requests and streamed responses through unchanged. Host and Origin naming the proxy are rewritten
 * to name the hub instead, so the hub's own DNS-rebinding checks still see what the client sent.
 */
import { createServer, request } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BearerProxy {
  url: string;
  close(): Promise<void>;
}

export async function startBearerProxy(target: string, token: string): Promise<BearerProxy> {
  const upstream = new URL(target);
  let own = '';
  const retarget = (v: string | undefined, withScheme: boolean): string | undefined => {
    if (v === undefined) return v;
    const prefix = withScheme ? 'http://' : '';
    for (const name of ['127.0.0.1', 'localhost', '[::1]']) {
      if (v.toLowerCase() === `${prefix}${name}:${own}`) return `${prefix}${name}:${upstream.port}`;
    }
    return v;
  };
  const server: Server = createServer((req, res) => {
    const headers: IncomingHttpHeaders = { ...req.headers, authorization: `Bearer ${token}` };
    headers.host = retarget(req.headers.host, false);
    if (req.headers.origin !== undefined) headers.origin = retarget(req.headers.origin, true);
    const out = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      res.flushHeaders();
      up.pipe(res);
    });
    out.on('error', () => res.destroy());
    res.on('close', () => out.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  own = String((server.address() as AddressInfo).port);
  return {
    url: `http://127.0.0.1:${own}${upstream.pathname}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The load generator of `load.bench.ts`, run in its own process so its own work does not share
 * the hub's CPU accounting or event loop: `agents` MCP clients over Streamable HTTP, each its own
 * session on its own keep-alive connection, each calling `channel_observe` (a read answering a
 * screen-sized text, `load-drivers.ts`) back to back for `seconds`. Prints one JSON line: calls,
 * errors, and the latency samples' p50/p90/p99/max in ms.
 *
 * Each agent speaks the protocol itself (initialize, the initialized notification, `tools/call`
 * with the session and protocol-version headers, a DELETE to leave) and reads the answer from the
 * SSE or JSON body, as any client must. It does not run the SDK's client: fifty of those in one
 * process spend a core of their own on schema checks of every result, so the figure measured the
 * generator, not the hub (`UPLINK_BENCH_LOAD_CLIENT=sdk` runs them instead, for comparison).
 * Usage: node load-generator.mjs <mcp url> <bearer token> <agents> <seconds>
 */
import { Agent, request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { percentile } from './types';

const [url, token, agentsText, secondsText] = process.argv.slice(2);
const agents = Number(agentsText);
const seconds = Number(secondsText);
if (!url || !token || !Number.isSafeInteger(agents) || !(seconds > 0)) {
  console.error('usage: load-generator.mjs <mcp url> <bearer token> <agents> <seconds>');
  process.exit(2);
}

const PROTOCOL_VERSION = '2025-06-18';
const observe = { name: 'channel_observe', arguments: { channel: 'load:screen', op: 'read', args: { lines: 50 } } };

interface JsonRpcAnswer {
  id?: number;
  result?: { isError?: boolean; content?: unknown[] };
  error?: { message: string };
}

/** One agent: an MCP session over Streamable HTTP on one keep-alive connection. */
class HttpAgent {
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 1 });
  readonly #url = new URL(url!);
  #session: string | undefined;
  #nextId = 1;

  async connect(i: number): Promise<void> {
    await this.#call('initialize', { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: `load-agent-${i}`, version: '1' } });
    await this.#send('POST', JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  }

  /** One `tools/call`; true when it answered a result that is not an error. */
  async observe(): Promise<boolean> {
    const answer = await this.#call('tools/call', observe);
    return answer.result !== undefined && answer.result.isError !== true && Array.isArray(answer.result.content);
  }

  async leave(): Promise<void> {
    await this.#send('DELETE', undefined).catch(() => undefined);
    this.#agent.destroy();
  }

  async #call(method: string, params: unknown): Promise<JsonRpcAnswer> {
    const id = this.#nextId++;
    const { type, body } = await this.#send('POST', JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    const answers: JsonRpcAnswer[] = [];
    if (type.startsWith('text/event-stream')) {
      for (const line of body.split('\n')) if (line.startsWith('data:')) answers.push(JSON.parse(line.slice(5)) as JsonRpcAnswer);
    } else if (body) answers.push(JSON.parse(body) as JsonRpcAnswer);
    const answer = answers.find((a) => a.id === id);
    if (!answer) throw new Error(`no answer to ${method}`);
    return answer;
  }

  #send(method: string, body: string | undefined): Promise<{ type: string; body: string }> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': PROTOCOL_VERSION,
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.#session) headers['mcp-session-id'] = this.#session;
    return new Promise((resolve, reject) => {
      const req = request(this.#url, { method, headers, agent: this.#agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if ((res.statusCode ?? 0) >= 300) return reject(new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`));
          const session = res.headers['mcp-session-id'];
          if (typeof session === 'string') this.#session = session;
          resolve({ type: String(res.headers['content-type'] ?? ''), body: text });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  }
}

/** The same agent through the SDK's client. */
class SdkAgent {
  #client = new Client({ name: 'load-agent', version: '1' });
  #transport = new StreamableHTTPClientTransport(new URL(url!), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  async connect(): Promise<void> {
    await this.#client.connect(this.#transport);
  }
  async observe(): Promise<boolean> {
    return (await this.#client.callTool(observe)).isError !== true;
  }
  async leave(): Promise<void> {
    await this.#transport.terminateSession().catch(() => undefined);
    await this.#client.close().catch(() => undefined);
  }
}

const useSdk = process.env.UPLINK_BENCH_LOAD_CLIENT === 'sdk';
const clients = Array.from({ length: agents }, () => (useSdk ? new SdkAgent() : new HttpAgent()));
await Promise.all(clients.map((c, i) => c.connect(i)));
// One call each first: sessions warm, nothing timed.
await Promise.all(clients.map((c) => c.observe()));
const latencies: number[] = [];
let errors = 0;
const deadline = performance.now() + seconds * 1000;
const t0 = performance.now();
await Promise.all(
  clients.map(async (client) => {
    while (performance.now() < deadline) {
      const start = performance.now();
      try {
        if (!(await client.observe())) errors++;
      } catch {
        errors++;
      }
      latencies.push(performance.now() - start);
    }
  }),
);
const elapsed = (performance.now() - t0) / 1000;
// Each agent leaves as a well-behaved client does: its session ended (DELETE), then closed.
await Promise.all(clients.map((c) => c.leave()));
const calls = latencies.length;
process.stdout.write(
  `${JSON.stringify({ calls, errors, elapsed, p50: percentile(latencies, 50), p90: percentile(latencies, 90), p99: percentile(latencies, 99), max: percentile(latencies, 100) })}\n`,
);
process.exit(0);

/**
 * The load generator of `load.bench.ts`, run in its own process so its own work (HTTP clients,
 * JSON) does not share the hub's CPU accounting or event loop: `agents` MCP clients over
 * Streamable HTTP, each its own session, each calling `channel_observe` (a read answering a
 * screen-sized text, `load-drivers.ts`) back to back for `seconds`. Prints one JSON line: calls, errors, and the
 * latency samples' p50/p99 in ms.
 * Usage: node load-generator.mjs <mcp url> <bearer token> <agents> <seconds>
 */
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

const observe = { name: 'channel_observe', arguments: { channel: 'load:screen', op: 'read', args: { lines: 50 } } };

async function connect(i: number): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: `load-agent-${i}`, version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(url!), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  return { client, transport };
}

const agentsConnected = await Promise.all(Array.from({ length: agents }, (_, i) => connect(i)));
const clients = agentsConnected.map((a) => a.client);
// One call each first: sessions warm, nothing timed.
await Promise.all(clients.map((c) => c.callTool(observe)));
const latencies: number[] = [];
let errors = 0;
const deadline = performance.now() + seconds * 1000;
const t0 = performance.now();
await Promise.all(
  clients.map(async (client) => {
    while (performance.now() < deadline) {
      const start = performance.now();
      try {
        const result = await client.callTool(observe);
        if (result.isError) errors++;
      } catch {
        errors++;
      }
      latencies.push(performance.now() - start);
    }
  }),
);
const elapsed = (performance.now() - t0) / 1000;
// Each agent leaves as a well-behaved client does: its session ended (DELETE), then closed.
await Promise.all(agentsConnected.map(({ transport }) => transport.terminateSession().catch(() => undefined)));
await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
const calls = latencies.length;
process.stdout.write(`${JSON.stringify({ calls, errors, elapsed, p50: percentile([...latencies], 50), p99: percentile([...latencies], 99) })}\n`);
process.exit(0);

/**
 * The baseline of the stdio round-trip benchmark: the MCP SDK's own server with one echo tool.
 * `sdk` connects it as the SDK does; `direct` connects it as the hub connects its servers
 * (requests dispatched at once), so the difference to the hub is the hub's own work.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';
import { connectMcp } from '../src/main/edges/mcp/server';

const server = new McpServer({ name: 'bare', version: '1.0.0' });
server.tool('echo', { text: z.string() }, async ({ text }) => ({ content: [{ type: 'text', text: JSON.stringify({ text }) }] }));
const transport = new StdioServerTransport();
if (process.argv[2] === 'direct') await connectMcp(server.server, transport);
else await server.connect(transport);

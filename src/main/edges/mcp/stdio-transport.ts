/**
 * MCP over stdin/stdout, one JSON-RPC message per line, like the SDK's stdio transport but with
 * its parse step replaced: a line that is not a valid message is answered with its JSON-RPC error
 * (./jsonrpc) instead of being dropped, so a client never waits for an answer that cannot come.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { HubError } from '../../hub';
import { checkText, RPC_CODES } from './jsonrpc';

/** The longest line read (the SDK's own bound): past it the line is refused and skipped to its end. */
export const MAX_STDIO_LINE_BYTES = 10 * 1024 * 1024;

export class LineStdioTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  #parts: Buffer[] = [];
  #size = 0;
  /** Inside a line that grew past the bound: dropped up to its newline. */
  #skipping = false;
  #started = false;

  readonly stdin: NodeJS.ReadableStream;
  readonly stdout: NodeJS.WritableStream;
  readonly maxLineBytes: number;

  constructor(stdin: NodeJS.ReadableStream = process.stdin, stdout: NodeJS.WritableStream = process.stdout, maxLineBytes = MAX_STDIO_LINE_BYTES) {
    this.stdin = stdin;
    this.stdout = stdout;
    this.maxLineBytes = maxLineBytes;
  }

  async start(): Promise<void> {
    if (this.#started) throw new Error('LineStdioTransport already started');
    this.#started = true;
    this.stdin.on('data', this.#ondata);
    this.stdin.on('error', this.#onerror);
    // A last line without its newline (the client wrote it and closed) is still a line.
    this.stdin.on('end', this.#onend);
  }

  #ondata = (chunk: Buffer | string): void => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let start = 0;
    for (let nl = bytes.indexOf(10, start); nl !== -1; nl = bytes.indexOf(10, start)) {
      this.#append(bytes.subarray(start, nl));
      start = nl + 1;
      this.#endLine();
    }
    this.#append(bytes.subarray(start));
  };

  #onerror = (error: Error): void => this.onerror?.(error);

  #onend = (): void => {
    if (this.#size > 0 || this.#skipping) this.#endLine();
  };

  #append(part: Buffer): void {
    if (part.length === 0 || this.#skipping) return;
    this.#size += part.length;
    if (this.#size > this.maxLineBytes) {
      this.#parts = [];
      this.#size = 0;
      this.#skipping = true;
      return;
    }
    this.#parts.push(part);
  }

  #endLine(): void {
    if (this.#skipping) {
      this.#skipping = false;
      const message = new HubError('core', 'Invalid', `Invalid Request: a message over ${this.maxLineBytes} bytes`, {
        hint: 'send smaller messages (one JSON-RPC message per line)',
      }).rendered;
      void this.send({ jsonrpc: '2.0', id: null as unknown as string, error: { code: RPC_CODES.invalidRequest, message } });
      return;
    }
    const raw = Buffer.concat(this.#parts).toString('utf8');
    this.#parts = [];
    this.#size = 0;
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    // Blank lines between messages are not messages.
    if (line.trim() === '') return;
    const checked = checkText(line);
    if ('messages' in checked) {
      for (const m of checked.messages) this.onmessage?.(m);
      return;
    }
    if (checked.answer) void this.send(checked.answer as JSONRPCMessage | JSONRPCMessage[]);
  }

  send(message: JSONRPCMessage | JSONRPCMessage[]): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.stdout.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    this.stdin.off('data', this.#ondata);
    this.stdin.off('error', this.#onerror);
    this.stdin.off('end', this.#onend);
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.#parts = [];
    this.#size = 0;
    this.onclose?.();
  }
}

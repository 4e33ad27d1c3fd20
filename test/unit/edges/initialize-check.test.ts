import { describe, expect, it, vi } from 'vitest';
import { InitializeRequestSchema, isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { quickInitializeCheck } from '../../../src/main/edges/http/initialize-check';

const init = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
};
const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'channel_observe', arguments: {} } };

describe('the quick initialize check', () => {
  quickInitializeCheck();
  quickInitializeCheck(); // twice: installed once

  it('answers as the full schema does', () => {
    expect(isInitializeRequest(init)).toBe(true);
    expect(isInitializeRequest({ ...init, params: {} })).toBe(false);
    expect(isInitializeRequest(call)).toBe(false);
    expect(isInitializeRequest(null)).toBe(false);
    expect(isInitializeRequest([init])).toBe(false);
    expect(isInitializeRequest({ ...call, method: ['initialize'] })).toBe(false);
  });

  it('does not parse a message whose method is not initialize', () => {
    const internals = (InitializeRequestSchema as unknown as { _zod: { run: (...a: unknown[]) => unknown } })._zod;
    const run = vi.spyOn(internals, 'run');
    try {
      expect(isInitializeRequest(call)).toBe(false);
      expect(run).not.toHaveBeenCalled();
      expect(isInitializeRequest(init)).toBe(true);
      expect(run).toHaveBeenCalledTimes(1);
    } finally {
      run.mockRestore();
    }
  });

  it('still reports the full error when it is read', () => {
    const result = InitializeRequestSchema.safeParse(call);
    expect(result.success).toBe(false);
    expect(result.error?.issues.some((i) => i.path.includes('method'))).toBe(true);
  });
});

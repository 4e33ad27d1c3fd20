/** The driver protocol's framing and error mapping, shared by the host and the SDK. */
import { describe, expect, it } from 'vitest';
import { DriverError, renderDriverError } from '../../../src/main/drivers/contract';
import { decodeLine, encodeLine, errorToRpc, LineSplitter, rpcToError } from '../../../src/main/drivers/external/wire';

describe('LineSplitter', () => {
  it('joins a UTF-8 character split across chunks and drops a trailing CR', () => {
    const s = new LineSplitter();
    const bytes = Buffer.from('{"a":"é"}\r\n{"b":1}\n', 'utf8');
    const cut = bytes.indexOf(0xa9); // inside é
    expect(s.push(bytes.subarray(0, cut))).toEqual([]);
    expect(s.push(bytes.subarray(cut))).toEqual(['{"a":"é"}', '{"b":1}']);
  });

  it('refuses a line past its bound, then carries on with the next', () => {
    const s = new LineSplitter(8);
    expect(() => s.push(Buffer.from('123456789'))).toThrow(/longer than 8 bytes/);
    expect(s.push(Buffer.from('ok\n'))).toEqual(['ok']);
  });
});

describe('decodeLine', () => {
  it('says why a line is not a message', () => {
    expect(decodeLine('hello')).toMatch(/^a line that is not JSON/);
    expect(decodeLine('{"id":1}')).toMatch(/not a JSON-RPC 2.0 message/);
    expect(decodeLine('{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}')).toMatch(/both result and error/);
    expect(decodeLine('{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}')).toMatch(/malformed error/);
  });

  it('round-trips requests, notifications and responses', () => {
    for (const m of [
      { jsonrpc: '2.0', id: 1, method: 'invoke', params: { addr: 'a' } },
      { jsonrpc: '2.0', method: 'cancel', params: { id: 1 } },
      { jsonrpc: '2.0', id: 1, result: null },
    ] as const) {
      const line = encodeLine(m);
      expect(line.endsWith('\n') && !line.slice(0, -1).includes('\n')).toBe(true);
      expect(decodeLine(line.slice(0, -1))).toEqual(m);
    }
  });
});

describe('errors', () => {
  it('a DriverError crosses as data and comes back the same', () => {
    const e = errorToRpc(new DriverError('NotFound', 'no note todo', { hint: 'list notes' }));
    expect(e).toEqual({ code: -32000, message: 'no note todo', data: { kind: 'NotFound', message: 'no note todo', hint: 'list notes' } });
    const back = rpcToError(e, 'invoke');
    expect([back.kind, back.message, back.hint]).toEqual(['NotFound', 'no note todo', 'list notes']);
  });

  it('anything else is Upstream with its message, nothing added', () => {
    const plain = rpcToError({ code: -32603, message: 'boom' }, 'invoke');
    expect([plain.kind, plain.message, plain.hint]).toEqual(['Upstream', 'boom', undefined]);
    expect(renderDriverError('notes', plain)).toBe('uplink error [notes:Upstream]: boom');
    const missing = rpcToError({ code: -32601, message: 'Method not found' }, 'preview');
    expect([missing.kind, missing.message]).toEqual(['Upstream', 'Method not found']);
    expect(missing.hint).toMatch(/does not offer preview/);
    expect(errorToRpc(new Error('oops')).data).toEqual({ kind: 'Upstream', message: 'oops' });
  });

  it('data with an invalid kind keeps its message, hint and evidence as Upstream; a hint that is not a string is dropped', () => {
    const bad = rpcToError(
      { code: -32000, message: 'outer', data: { kind: 'Exploded', message: 'the real reason', hint: 'do x', evidence: { a: [1] } } },
      'invoke',
    );
    expect([bad.kind, bad.message, bad.hint, bad.evidence]).toEqual(['Upstream', 'the real reason', 'do x', { a: [1] }]);
    const noKind = rpcToError({ code: -32000, message: 'outer', data: { message: 'inner' } }, 'invoke');
    expect([noKind.kind, noKind.message]).toEqual(['Upstream', 'inner']);
    const oddHint = rpcToError({ code: -32000, message: 'outer', data: { kind: 'NotFound', message: 'gone', hint: { no: 1 } } }, 'invoke');
    expect([oddHint.kind, oddHint.message, oddHint.hint]).toEqual(['NotFound', 'gone', undefined]);
    const noMessage = rpcToError({ code: -32000, message: 'outer', data: { kind: 'NotFound' } }, 'invoke');
    expect([noMessage.kind, noMessage.message]).toEqual(['Upstream', 'outer']);
  });

  it('evidence of any JSON value crosses and comes back as JSON', () => {
    const evidence = { changed: ['pid'], was: 4242, now: null };
    const back = rpcToError(errorToRpc(new DriverError('Rejected', 'target changed', { evidence })), 'invoke');
    expect(back.evidence).toEqual(evidence);
  });
});

import { describe, expect, it } from 'vitest';
import { ipcCallHandler, registerPanelIpc, sendPanelEvent } from '../../../src/main/electron/ipc';
import { openPanelSession } from '../../../src/main/edges/panel/session';
import { createBroadcast } from '../../../src/main/edges/panel/mount';
import { PANEL_METHODS } from '../../../src/shared/panel-channels';
import { ipcCallChannel, ipcEventChannel } from '../../../src/shared/panel-api';
import { approval, createFakeHub } from '../panel/fake-hub';

const INDEX = 'file:///app/dist/renderer/index.html';
const frame = (url: string, parent: unknown = null) => ({ senderFrame: { url, parent } as never });

function setup() {
  const hub = createFakeHub();
  const events: Array<[string, unknown]> = [];
  const session = openPanelSession(hub, { version: '0.1.0', user: 'alice' }, createBroadcast(), (e, p) => events.push([e, p]), 0);
  return { hub, session, events };
}

describe('Electron IPC generated from the channel map', () => {
  it('registers exactly one handler per PanelApi method and removes them all', () => {
    const { session } = setup();
    const handled = new Map<string, unknown>();
    const dispose = registerPanelIpc(
      { handle: (c: string, h: unknown) => void handled.set(c, h), removeHandler: (c: string) => void handled.delete(c) } as never,
      () => session.handlers,
      INDEX,
    );
    expect([...handled.keys()].sort()).toEqual(PANEL_METHODS.map(ipcCallChannel).sort());
    dispose();
    expect(handled.size).toBe(0);
  });

  it('runs a call from our own top frame', async () => {
    const { session, hub } = setup();
    hub.addApproval(approval('a1'));
    const reply = await ipcCallHandler('decide', () => session.handlers, INDEX)(frame(INDEX), { approval_id: 'a1', decision: 'once' });
    expect(reply).toEqual({ ok: true, result: { accepted: true, granted: true } });
    expect(hub.decisions).toEqual([{ id: 'a1', kind: 'once', by: 'alice', reason: undefined }]);
  });

  it('refuses calls from a subframe or a foreign page without running them', async () => {
    const { session, hub } = setup();
    hub.addApproval(approval('a1'));
    const h = ipcCallHandler('decide', () => session.handlers, INDEX);
    for (const f of [frame(INDEX, {}), frame('https://evil.example/'), frame('file:///tmp/x.html'), { senderFrame: null as never }]) {
      expect(await h(f, { approval_id: 'a1', decision: 'once' })).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    }
    expect(hub.decisions).toEqual([]);
  });

  it('validates payloads before a handler runs', async () => {
    const { session, hub } = setup();
    hub.addApproval(approval('a1'));
    const h = ipcCallHandler('decide', () => session.handlers, INDEX);
    for (const bad of [
      null,
      'x',
      { approval_id: 'a1' },
      { approval_id: 'a1', decision: 'maybe' },
      { approval_id: 'a1', decision: 'once', extra: true },
      { approval_id: '', decision: 'once' },
    ]) {
      expect(await h(frame(INDEX), bad)).toMatchObject({ ok: false, error: { code: 'invalid_request' } });
    }
    expect(hub.decisions).toEqual([]);
  });

  it('answers "starting" until the hub is up', async () => {
    expect(await ipcCallHandler('listRules', () => undefined, INDEX)(frame(INDEX), {})).toMatchObject({ ok: false, error: { code: 'unavailable' } });
  });

  it('sends events on their channel and not to a destroyed window', () => {
    const sent: Array<[string, unknown]> = [];
    const live = { isDestroyed: () => false, send: (c: string, p: unknown) => void sent.push([c, p]) };
    const dead = { isDestroyed: () => true, send: () => sent.push(['dead', null]) };
    sendPanelEvent(live, 'rulesChanged', []);
    sendPanelEvent(dead, 'rulesChanged', []);
    expect(sent).toEqual([[ipcEventChannel('rulesChanged'), []]]);
  });

  it('the window session counts as an attached panel and detaches on close', () => {
    const { session, hub } = setup();
    expect(hub.attached).toBe(1);
    session.close();
    session.close();
    expect(hub.attached).toBe(0);
  });
});

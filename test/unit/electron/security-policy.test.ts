import { describe, expect, it } from 'vitest';
import {
  ELECTRON_CSP,
  allowNavigation,
  allowRequest,
  electronCsp,
  isLocalResource,
  isTrustedSender,
  permissionDecision,
  secureWebPreferences,
} from '../../../src/main/electron/security-policy';

const INDEX = 'file:///opt/Uplink/resources/app.asar/dist/renderer/index.html';

describe('window web preferences', () => {
  it('isolate the context, sandbox the renderer and give it no Node or webviews', () => {
    const prefs = secureWebPreferences('/x/preload.cjs');
    expect(prefs).toMatchObject({
      preload: '/x/preload.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webviewTag: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
    });
  });

  it('give an attached panel no preload (no IPC bridge), with the same guards', () => {
    const prefs = secureWebPreferences();
    expect(prefs).not.toHaveProperty('preload');
    expect(prefs).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false, webviewTag: false, webSecurity: true });
  });
});

describe('IPC sender check', () => {
  it('trusts the top frame showing our own index.html (any fragment)', () => {
    expect(isTrustedSender(INDEX, INDEX)).toBe(true);
    expect(isTrustedSender(`${INDEX}#/timeline`, INDEX)).toBe(true);
  });

  it('refuses subframes, other files, other schemes and garbage', () => {
    expect(isTrustedSender(INDEX, INDEX, false)).toBe(false);
    expect(isTrustedSender('file:///tmp/evil.html', INDEX)).toBe(false);
    expect(isTrustedSender('https://example.com/index.html', INDEX)).toBe(false);
    expect(isTrustedSender('http://127.0.0.1:7420/', INDEX)).toBe(false);
    expect(isTrustedSender(undefined, INDEX)).toBe(false);
    expect(isTrustedSender('not a url', INDEX)).toBe(false);
    expect(isTrustedSender('', INDEX)).toBe(false);
  });

  it('compares origins when the renderer is served over http', () => {
    expect(isTrustedSender('http://127.0.0.1:7420/index.html', 'http://127.0.0.1:7420/')).toBe(true);
    expect(isTrustedSender('http://127.0.0.1:7421/', 'http://127.0.0.1:7420/')).toBe(false);
  });
});

describe('navigation, permissions and remote content', () => {
  it('blocks navigation anywhere but our own page', () => {
    expect(allowNavigation(INDEX, INDEX)).toBe(true);
    expect(allowNavigation('https://evil.example/', INDEX)).toBe(false);
    expect(allowNavigation('file:///etc/passwd', INDEX)).toBe(false);
  });

  it('denies every permission request', () => {
    for (const p of ['notifications', 'media', 'geolocation', 'clipboard-read', 'openExternal', 'unknown']) expect(permissionDecision(p)).toBe(false);
  });

  it('loads only local resources', () => {
    expect(isLocalResource(INDEX)).toBe(true);
    expect(isLocalResource('https://cdn.example/x.js')).toBe(false);
    expect(isLocalResource('http://127.0.0.1:7420/x')).toBe(false);
    expect(isLocalResource('ws://127.0.0.1:7420/panel/ws')).toBe(false);
  });

  it('sends a CSP that allows only our own scripts and no connections', () => {
    expect(ELECTRON_CSP).toContain("default-src 'none'");
    expect(ELECTRON_CSP).toContain("script-src 'self'");
    expect(ELECTRON_CSP).toContain("connect-src 'none'");
    expect(ELECTRON_CSP).not.toMatch(/unsafe-(inline|eval)/);
  });

  it('in attach mode loads only the attached hub: its origin and its WebSocket, no files, no other host', () => {
    const origin = 'http://127.0.0.1:7420';
    expect(allowRequest('http://127.0.0.1:7420/assets/index.js', origin)).toBe(true);
    expect(allowRequest('ws://127.0.0.1:7420/panel/ws', origin)).toBe(true);
    expect(allowRequest('http://127.0.0.1:7421/x', origin)).toBe(false);
    expect(allowRequest('wss://127.0.0.1:7420/panel/ws', origin)).toBe(false);
    expect(allowRequest('https://cdn.example/x.js', origin)).toBe(false);
    expect(allowRequest(INDEX, origin)).toBe(false);
    expect(allowRequest(INDEX)).toBe(true);
    expect(allowRequest('http://127.0.0.1:7420/x')).toBe(false);
  });

  it('in attach mode keeps navigation on the attached origin', () => {
    const url = 'http://127.0.0.1:7420/#code=abc';
    expect(allowNavigation('http://127.0.0.1:7420/', url)).toBe(true);
    expect(allowNavigation('http://127.0.0.1:7421/', url)).toBe(false);
    expect(allowNavigation('https://example.com/', url)).toBe(false);
    expect(allowNavigation(INDEX, url)).toBe(false);
  });

  it('in attach mode sends the browser panel CSP, which connects only to that hub', () => {
    const csp = electronCsp('http://127.0.0.1:7420');
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self' ws://127.0.0.1:7420");
    expect(csp).not.toMatch(/unsafe-(inline|eval)/);
    expect(electronCsp()).toBe(ELECTRON_CSP);
  });
});

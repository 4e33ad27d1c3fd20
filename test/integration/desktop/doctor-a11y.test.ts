/**
 * The accessibility half of doctor against real D-Bus buses that are broken the ways desktops
 * break: a bus with no AT-SPI registry on it, and a registry that holds its name but never
 * answers. Either way doctor says what is wrong in one line with a hint, within its deadline.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDesktopDriver } from '../../../src/main/drivers/desktop';
import type { DesktopDriver } from '../../../src/main/drivers/desktop';
import { PYTHON } from './apps';
import { stopChild, waitFor } from './session';

let bus: ChildProcess;
let address: string;
const children: ChildProcess[] = [];
const drivers: DesktopDriver[] = [];

// Owns the registry's well-known name on the bus, then waits to be stopped (SIGSTOP) by the test.
const FAKE_REGISTRY = `
from gi.repository import Gio, GLib
c = Gio.bus_get_sync(Gio.BusType.SESSION, None)
c.call_sync('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus', 'RequestName',
            GLib.Variant('(su)', ('org.a11y.atspi.Registry', 0)), None, 0, -1, None)
print('owned', flush=True)
GLib.MainLoop().run()
`;

function driverOn(extra: NodeJS.ProcessEnv = {}): DesktopDriver {
  const env: NodeJS.ProcessEnv = { ...process.env, DBUS_SESSION_BUS_ADDRESS: address, AT_SPI_BUS_ADDRESS: address, ...extra };
  delete env.DISPLAY;
  delete env.WAYLAND_DISPLAY;
  const driver = createDesktopDriver({ env, stateDir: false, callTimeoutMs: 20_000 });
  drivers.push(driver);
  return driver;
}

const a11yLine = (lines: string[]): string => lines.find((l) => l.startsWith('accessibility')) ?? lines.join(' | ');

beforeAll(async () => {
  bus = spawn('dbus-daemon', ['--session', '--nofork', '--print-address=1'], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  bus.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  address = await waitFor('dbus-daemon to print its address', () => (out.includes('\n') ? out.split('\n')[0]! : undefined), 10_000);
});

afterAll(async () => {
  for (const d of drivers) await d.dispose();
  for (const c of children) {
    c.kill('SIGCONT');
    await stopChild(c);
  }
  await stopChild(bus);
});

describe('doctor: the accessibility registry', () => {
  it('a bus with no registry on it is reported as such, not as reachable', async () => {
    const report = await driverOn().doctor();
    expect(report.ok).toBe(false);
    const line = a11yLine(report.lines);
    expect(line).toMatch(/^accessibility: no AT-SPI registry on the accessibility bus .* — hint: .*at-spi2-core/);
    expect(line).not.toContain('\n');
  });

  it('a registry that does not answer is reported within the deadline, with a hint', async () => {
    const registry = spawn(PYTHON, ['-c', FAKE_REGISTRY], { env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: address }, stdio: ['ignore', 'pipe', 'ignore'] });
    children.push(registry);
    let out = '';
    registry.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    await waitFor('the fake registry to own its name', () => out.includes('owned'), 10_000);
    registry.kill('SIGSTOP');
    const started = Date.now();
    const report = await driverOn().doctor();
    expect(Date.now() - started).toBeLessThan(8000);
    expect(report.ok).toBe(false);
    expect(a11yLine(report.lines)).toMatch(/^accessibility: the AT-SPI registry on the accessibility bus .* is not answering .* — hint: /);
  });
});

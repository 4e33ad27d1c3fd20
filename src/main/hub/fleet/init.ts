/**
 * `uplink fleet init`: a fleet's keys and its NATS server's config, made once by the operator.
 * Each hub gets its own NKey pair (the seed in `<hub>.nk`, 0600), the roster maps public keys to
 * names, and `nats-server.conf` admits exactly those keys, each allowed only the subjects its hub
 * publishes and subscribes to: a member cannot subscribe to another's call subject (so it cannot
 * take another's calls), nor publish another's presence, prompts, history or checkpoints.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeFileAtomic } from '../files';
import { HISTORY_STREAM } from './history';
import { keyPairFromSeed, nk, parseRoster } from './keys';
import type { NKeyPair, Roster } from './keys';
import { hubNameProblem } from './names';

export interface FleetInitOptions {
  /** The hubs of the fleet, by name. */
  hubs: string[];
  /** Where the files go (created if missing). */
  out: string;
  /** The server's port on 127.0.0.1 (default 4222). */
  port?: number;
  /** The fleet's name, in the roster (default `uplink`). */
  fleet?: string;
  /**
   * Overwrite files that exist. A hub whose seed is there keeps its key, so re-running with a hub
   * added or removed changes only the roster and the server config.
   */
  force?: boolean;
}

/** A hub's `fleet` section of config.json. */
export interface FleetInitConfig {
  url: string;
  name: string;
  seed_file: string;
  roster_file: string;
}

export interface FleetInitResult {
  /** The files written, absolute. */
  files: string[];
  roster: Roster;
  /** Each hub's `fleet` section. */
  configs: Record<string, FleetInitConfig>;
}

/** Every JetStream API subject a hub uses for the history stream, and nothing that deletes or purges it. */
const JS_API = [
  '$JS.API.INFO',
  `$JS.API.STREAM.INFO.${HISTORY_STREAM}`,
  `$JS.API.STREAM.CREATE.${HISTORY_STREAM}`,
  `$JS.API.STREAM.MSG.GET.${HISTORY_STREAM}`,
  `$JS.API.CONSUMER.CREATE.${HISTORY_STREAM}`,
  `$JS.API.CONSUMER.CREATE.${HISTORY_STREAM}.>`,
  `$JS.API.CONSUMER.INFO.${HISTORY_STREAM}.*`,
  `$JS.API.CONSUMER.DELETE.${HISTORY_STREAM}.*`,
  `$JS.API.CONSUMER.MSG.NEXT.${HISTORY_STREAM}.*`,
];

/** What hub `hub` may publish and subscribe to (docs/fleet.md, "Subjects"). */
export function hubPermissions(hub: string): { publish: string[]; subscribe: string[] } {
  return {
    publish: [
      `uplink.presence.${hub}`,
      `uplink.prompts.${hub}`,
      `uplink.history.${hub}`,
      `uplink.checkpoint.${hub}`,
      // Requests to any hub; replies and progress to the caller's inbox (signed: a forged one is dropped).
      'uplink.*.call',
      'uplink.*.cancel',
      '_INBOX.>',
      ...JS_API,
    ],
    subscribe: [
      // Its own calls only (queue groups included): no member can take another's.
      `uplink.${hub}.call`,
      `uplink.${hub}.cancel`,
      'uplink.presence.*',
      'uplink.prompts.*',
      'uplink.checkpoint.*',
      // Its own inbox prefix only: no member reads another's replies.
      `_INBOX.${hub}.>`,
    ],
  };
}

const quote = (s: string): string => JSON.stringify(s);

/** The server config: loopback, JetStream, one nkey user per hub with its permissions. */
export function natsServerConf(roster: Roster, port: number, storeDir: string): string {
  const users = Object.entries(roster.hubs).map(([hub, key]) => {
    const p = hubPermissions(hub);
    return [
      `    # hub ${hub}`,
      `    { nkey: ${key}, permissions: {`,
      `        publish: { allow: [${p.publish.map(quote).join(', ')}] },`,
      `        subscribe: { allow: [${p.subscribe.map(quote).join(', ')}] }`,
      `    } }`,
    ].join('\n');
  });
  return [
    `# The NATS server of Uplink fleet ${roster.fleet} (roster version ${roster.version}), written by \`uplink fleet init\`.`,
    `# Each hub joins with its own NKey and may use only its own subjects. Run: nats-server -c nats-server.conf`,
    `listen: 127.0.0.1:${port}`,
    `jetstream { store_dir: ${quote(storeDir)} }`,
    'authorization {',
    '  users = [',
    users.join(',\n'),
    '  ]',
    '}',
    '',
  ].join('\n');
}

/** Writes the fleet's keys, roster and server config under `o.out`; throws a one-line error a person can act on. */
export function initFleet(o: FleetInitOptions): FleetInitResult {
  const hubs = o.hubs.map((h) => h.trim()).filter(Boolean);
  if (!hubs.length) throw new Error('no hubs to make keys for — hint: name them: --hubs a,b,c');
  for (const hub of hubs) {
    const problem = hubNameProblem(hub);
    if (problem) throw new Error(problem);
  }
  const twice = hubs.find((h, i) => hubs.indexOf(h) !== i);
  if (twice) throw new Error(`hub ${twice} is named twice — hint: give each hub its own name`);
  const port = o.port ?? 4222;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`port ${port} is not a TCP port — hint: pass --port 1..65535`);
  const fleet = o.fleet ?? 'uplink';
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(fleet))
    throw new Error(`"${fleet.slice(0, 64)}" is not a fleet name — hint: letters, digits, dot, dash, underscore`);

  const out = resolve(o.out);
  const confFile = join(out, 'nats-server.conf');
  const rosterFile = join(out, 'roster.json');
  const seedFile = (hub: string): string => join(out, `${hub}.nk`);
  const targets = [confFile, rosterFile, ...hubs.map(seedFile)];
  const there = targets.filter((f) => existsSync(f));
  if (there.length && !o.force)
    throw new Error(
      `${there.join(', ')} already exist${there.length === 1 ? 's' : ''} — hint: pass --force to write the fleet anew (hubs whose seed is there keep their key)`,
    );

  let version = 1;
  if (o.force && existsSync(rosterFile)) {
    try {
      const old = parseRoster(JSON.parse(readFileSync(rosterFile, 'utf8')));
      if (typeof old !== 'string') version = old.version + 1;
    } catch {
      // A broken roster is replaced.
    }
  }
  const keys = new Map<string, NKeyPair>();
  for (const hub of hubs) {
    const file = seedFile(hub);
    keys.set(hub, o.force && existsSync(file) ? keyPairFromSeed(readFileSync(file, 'utf8'), file) : nk.createUser());
  }
  const roster: Roster = { fleet, version, hubs: Object.fromEntries(hubs.map((h) => [h, keys.get(h)!.getPublicKey()])) };

  mkdirSync(out, { recursive: true, mode: 0o700 });
  const written: string[] = [];
  for (const hub of hubs) {
    writeFileAtomic(seedFile(hub), `${new TextDecoder().decode(keys.get(hub)!.getSeed())}\n`, 0o600);
    written.push(seedFile(hub));
  }
  writeFileAtomic(rosterFile, `${JSON.stringify(roster, null, 2)}\n`, 0o644);
  writeFileAtomic(confFile, natsServerConf(roster, port, join(out, 'jetstream')), 0o600);
  written.push(rosterFile, confFile);
  const url = `nats://127.0.0.1:${port}`;
  const configs = Object.fromEntries(hubs.map((name) => [name, { url, name, seed_file: seedFile(name), roster_file: rosterFile }]));
  return { files: written, roster, configs };
}

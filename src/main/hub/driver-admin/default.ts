/**
 * Which drivers a hub runs: the product drivers (tmux, desktop), each given its live config
 * section. Nothing in the environment changes that: tests hand the CLI's `main` their own
 * `LoadDrivers` instead.
 */
import type { JsonSchema } from '../../kernel';
import { loadProductDrivers } from '../../drivers';
import type { DesktopConfig, Driver } from '../../drivers';

/** A live getter of one config section (drivers read it on every use). */
export type SectionGetter = (name: string) => () => unknown;

/** How a hub gets its drivers: the config schemas they own, then the drivers with live config. */
export interface DriverSet {
  configSchemas: Record<string, JsonSchema>;
  create(section: SectionGetter): Driver[];
}

/** A JSON Schema embedded as a config section: drop root-only keywords. */
export function sectionSchema(schema: JsonSchema): JsonSchema {
  if (typeof schema === 'boolean') return schema;
  const { $schema: _s, $id: _i, ...rest } = schema;
  return rest;
}

/** The product drivers: tmux and desktop, each reading its config section live. */
export async function productDrivers(): Promise<DriverSet> {
  const { tmux, desktop } = await loadProductDrivers();
  const { createTmuxDriver, tmuxConfigSchema } = tmux;
  const { createDesktopDriver, desktopConfigSchema } = desktop;
  return {
    configSchemas: { tmux: sectionSchema(tmuxConfigSchema), desktop: sectionSchema(desktopConfigSchema) },
    create: (section) => [
      createTmuxDriver({ config: section('tmux') }),
      createDesktopDriver({ config: section('desktop') as () => DesktopConfig | undefined }),
    ],
  };
}

/** How whatever creates a hub gets the drivers for its data dir. */
export type LoadDrivers = (dataDir: string) => Promise<DriverSet>;

/** The drivers for a data dir: the product drivers. */
export const loadDrivers: LoadDrivers = () => productDrivers();

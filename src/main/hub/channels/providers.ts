/**
 * The kernel providers of a hub's drivers: one per (driver, interaction kind), registered at start
 * and replaced when an external driver declares other ops after a restart.
 */
import type { InteractionKind, Runtime } from '../../kernel';
import type { Driver, ExternalDriver } from '../../drivers';
import type { CallContext } from '../call-context';
import type { ProviderView } from '../hub';
import { DriverProvider, providerIdFor } from './driver-provider';
import type { ChannelRegistry } from './registry';

/** The providers registered in one runtime, and the interaction kind of each. */
export class DriverProviders {
  #runtime: Runtime<CallContext>;
  #registry: ChannelRegistry;
  #providers: DriverProvider[] = [];
  /** Interaction kind by provider id (kernel events name the provider, not the kind). */
  readonly interactions = new Map<string, InteractionKind>();

  constructor(runtime: Runtime<CallContext>, registry: ChannelRegistry) {
    this.#runtime = runtime;
    this.#registry = registry;
  }

  /** Registers a provider per interaction kind the driver's ops name. */
  register(id: string, driver: Driver): void {
    const ops = this.#registry.opsOf(id);
    const kinds = [...new Set(ops.flatMap((o) => o.interactions))];
    for (const kind of kinds) {
      const provider = new DriverProvider(
        driver,
        kind,
        ops.filter((o) => o.interactions.includes(kind)),
      );
      this.#runtime.register(provider);
      this.#providers.push(provider);
      this.interactions.set(providerIdFor(id, kind), kind);
    }
  }

  /** Replaces an external driver's providers with ones for the ops it now declares. */
  reregister(driver: ExternalDriver): void {
    const id = driver.id;
    this.#unregister(id);
    this.#registry.refresh(id);
    try {
      this.register(id, driver);
    } catch (e) {
      // Ops the kernel refuses (a schema it cannot compile): none of them is offered, and doctor says why.
      this.#unregister(id);
      driver.refuse(`${id}'s ops cannot be offered: ${(e as Error).message}`);
      this.#registry.refresh(id);
    }
  }

  #unregister(id: string): void {
    for (const p of this.#providers.filter((x) => x.driverId === id)) this.#runtime.unregister(providerIdFor(id, p.interaction));
    this.#providers = this.#providers.filter((x) => x.driverId !== id);
  }

  /** The providers and the capabilities each offers, for the panel's provider view. */
  views(): ProviderView[] {
    return this.#providers.map((p) => ({
      provider_id: providerIdFor(p.driverId, p.interaction),
      version: p.descriptor().version,
      driver: p.driverId,
      interaction: p.interaction,
      capabilities: p.capabilities().map((c) => c.spec.id),
    }));
  }
}

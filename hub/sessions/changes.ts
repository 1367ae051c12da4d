// What changed in a tenant's catalog or resources, for whoever is told about it without a session
// of its own to carry it: the 2026-07-28 endpoint's subscriptions/listen streams (hub/modern/endpoint.ts).
// The composition root publishes (a child's list_changed, a resource update); a tenant's
// listeners hear their tenant's changes only.
import { EventEmitter } from "node:events";
import type { ServedTenant } from "../tenants/served-tenant.js";

export type TenantChange = { kind: "tools" | "prompts" | "resources" } | { kind: "resource"; uri: string };

export class TenantChanges {
  private readonly emitter = new EventEmitter();
  // awaited when the hub stops: an emitter's listeners return nothing anyone waits for
  private readonly endings = new Set<() => Promise<void>>();

  constructor() {
    // one listener per tenant endpoint, however many tenants the hub serves
    this.emitter.setMaxListeners(0);
  }

  publish(tenant: ServedTenant, change: TenantChange): void {
    this.emitter.emit(tenant.name, change);
  }

  /** The hub is stopping: listeners end what they keep open (listen streams close gracefully, with their result). */
  end(): Promise<unknown> {
    return Promise.allSettled([...this.endings].map((listener) => listener()));
  }

  onEnd(listener: () => Promise<void>): void {
    this.endings.add(listener);
  }

  private readonly drops = new Set<(tenant: ServedTenant) => Promise<void>>();

  /** A tenant is no longer served (a person's, dropped for idling): listeners let go of what they keep for it. */
  dropped(tenant: ServedTenant): Promise<unknown> {
    return Promise.allSettled([...this.drops].map((listener) => listener(tenant)));
  }

  onDropped(listener: (tenant: ServedTenant) => Promise<void>): void {
    this.drops.add(listener);
  }

  /** Hear one tenant's changes until the returned function is called. */
  subscribe(tenant: ServedTenant, listener: (change: TenantChange) => void): () => void {
    this.emitter.on(tenant.name, listener);
    return () => void this.emitter.off(tenant.name, listener);
  }
}

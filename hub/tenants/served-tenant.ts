// A tenant as the hub serves it: its own server instances and the catalog they make. Defined here,
// with the tenants, so that sessions, the HTTP front and the sweeper name it without importing the
// composition root (hub/hub.ts), which builds it.
import type { Catalog } from "../catalog/catalog.js";
import type { Child } from "../children/child.js";
import type { SessionInstances } from "../children/session-instances.js";
import type { Tenant } from "./tenants.js";

export interface ServedTenant extends Tenant {
  readonly children: Child[];
  readonly catalog: Catalog;
  /** Which child owns a resource URI, as last seen in one of this tenant's resources/list. */
  readonly resourceOwners: Map<string, Child>;
  /** Its sessions' own instances of the servers configured `instances: "session"`. */
  readonly instances: SessionInstances;
}

/** Every server process of the tenant: the configured ones and its sessions' own instances. */
export function runningServers(tenant: ServedTenant): Child[] {
  return [...tenant.children, ...tenant.instances.running()];
}

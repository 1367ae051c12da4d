// A tenant as the hub serves it: its own server instances and the catalog they make. Defined here,
// with the tenants, so that sessions, the HTTP front and the sweeper name it without importing the
// composition root (hub/hub.ts), which builds it.
import type { Catalog } from "../catalog/catalog.js";
import type { Child } from "../children/child.js";
import type { Tenant } from "./tenants.js";

export interface ServedTenant extends Tenant {
  readonly children: Child[];
  readonly catalog: Catalog;
  /** Which child owns a resource URI, as last seen in one of this tenant's resources/list. */
  readonly resourceOwners: Map<string, Child>;
}

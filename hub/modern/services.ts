// What the 2026-07-28 room uses of the hub as a whole: the sessions room's view of it, plus the
// tenants' lasting contexts, their changes and the tasks. hub/hub.ts, the composition root,
// provides it (the HTTP front's services extend it).
import type { HubConfig } from "../config/config.js";
import type { TenantChanges } from "../sessions/changes.js";
import type { ClientSession } from "../sessions/registry.js";
import type { SessionServices } from "../sessions/services.js";
import type { TaskStore } from "../tasks/store.js";
import type { ServedTenant } from "../tenants/served-tenant.js";

export interface ModernServices extends SessionServices {
  readonly config: HubConfig;
  /** Tool calls run as tasks, whichever era's client started them (hub/tasks/store.ts). */
  readonly tasks: TaskStore;
  /** The tenant's one long-lived context for 2026-07-28 clients (never idles out, not counted against session caps). */
  modernSession(tenant: ServedTenant): ClientSession;
  /** Catalog and resource changes per tenant, for 2026-07-28 listen streams. */
  readonly changes: TenantChanges;
}

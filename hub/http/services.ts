// What the HTTP front uses of the hub as a whole: the 2026-07-28 room's view of it, plus admission,
// readiness and draining. hub/hub.ts, the composition root, provides it.
import type { SessionView } from "../catalog/selection.js";
import type { ClientSession } from "../sessions/registry.js";
import type { ModernServices } from "../modern/services.js";
import type { Isolation } from "../tenants/isolation.js";
import type { ServedTenant } from "../tenants/served-tenant.js";
import type { EventBudget } from "./event-store.js";

export interface HubServices extends ModernServices {
  readonly isolation: Isolation;
  /** The bytes all sessions' resumable streams may keep (./event-store.ts). */
  readonly eventBudget: EventBudget;
  /** Set on SIGTERM (./replica.ts drain): not ready, no new sessions, calls in flight finish. */
  draining: boolean;
  readonly ready: boolean;
  /** Name collisions in the catalog. */
  readonly collisions: string[];
  /** The tenant of a request without an API key (the hub then has exactly one, keyless). */
  readonly keylessTenant: ServedTenant | undefined;
  /** A session a client asked for, or the refusal to send when its caps or churn rate say no. */
  openSession(id: string, kind: ClientSession["kind"], tenant: ServedTenant, clientKey: string, view: SessionView): Promise<ClientSession | Response>;
  /** The one session all sessionless requests of a client share (per tenant and address), or the refusal to open it. */
  implicitSession(tenant: ServedTenant, clientKey: string): Promise<ClientSession | Response>;
  /** The tenant of a person signed in with OAuth, made on their first request (hub/tenants/people.ts); refuses with PersonRefused. */
  personTenant(person: string): Promise<ServedTenant>;
  /** The hub's own address, without /mcp, as it listens (known once it does). */
  readonly listeningBase: string;
  /** What the configured defaults leave a session; its URL may narrow it. */
  defaultView(tenant: ServedTenant): SessionView;
}

// /metrics holds every tenant's figures (their sessions, calls, servers, restarts). On a hub that
// serves several tenants it belongs to the operator: it opens with the operator's own key
// (AGENTBOX_METRICS_KEY), never with a tenant's, whose own figures are in hub_metrics. On a hub with
// one tenant that tenant is the operator, and its key (or loopback, keyless) opens it as before.
import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import type { HubServices } from "./services.js";
import { jsonRpcError } from "../protocol/jsonrpc.js";
import { presentedKey, type HubEnv } from "./security.js";
import { severalTenants, tenantForKey } from "../tenants/tenants.js";

const digest = (value: string) => createHash("sha256").update(value).digest();

/** @param tenantGate what guards the hub's other paths (a tenant's key, or loopback when keyless) */
export function metricsGate(hub: HubServices, tenantGate: MiddlewareHandler<HubEnv>): MiddlewareHandler<HubEnv> {
  const operator = hub.config.metricsKey ? digest(hub.config.metricsKey) : undefined;
  const shared = severalTenants(hub.config);
  const forOperator =
    "This hub serves several tenants and /metrics shows all of them, so it opens only with the operator's key" +
    (operator ? "" : " (set AGENTBOX_METRICS_KEY, then scrape with Authorization: Bearer <that key>)") +
    ". A tenant's own figures are in its hub_metrics and hub_status tools.";
  return function metricsGuard(c, next) {
    const key = presentedKey(c.req.raw);
    if (operator && key !== undefined && timingSafeEqual(digest(key), operator)) return next();
    if (!shared) return tenantGate(c, next);
    if (key !== undefined && tenantForKey(hub.tenants, key)) {
      return Promise.resolve(jsonRpcError(403, -32001, `Forbidden: ${forOperator}`));
    }
    return Promise.resolve(jsonRpcError(401, -32001, `Unauthorized: ${forOperator}`, { headers: { "WWW-Authenticate": 'Bearer realm="agentbox-metrics"' } }));
  };
}

// A server that restarted lost the resource subscriptions its last process held: the hub, which
// keeps each session's, subscribes them again, and tells each subscriber its resource may have
// changed meanwhile (nobody watched it while the server was down).
import type { Logger } from "../../servers/lib/log.js";
import { errorMessage } from "../../servers/lib/log.js";
import type { Child } from "../children/child.js";
import type { ServedTenant } from "../tenants/served-tenant.js";
import type { TenantChanges } from "./changes.js";
import { childNotification } from "./child-requests.js";
import { forward, quietChannel } from "./forward.js";
import type { SessionRegistry } from "./registry.js";
import { childUri, knownOwner } from "./resources.js";

export function resubscribe(sessions: SessionRegistry, changes: TenantChanges, tenant: ServedTenant, child: Child, log: Logger): void {
  if (!child.capabilities.resources?.subscribe || !tenant.children.includes(child)) return;
  const renewals = new Map<string, Promise<unknown>[]>();
  for (const session of sessions.all()) {
    if (session.tenant !== tenant || session.closed) continue;
    for (const uri of session.subscriptions) {
      if (knownOwner(session, session.view, uri) !== child) continue;
      const renewed = forward(child, "resources/subscribe", { uri: childUri(child, uri) }, session, quietChannel()).catch((err: unknown) =>
        log.warn("a subscription was not renewed after its server restarted", { child: child.name, uri: uri.slice(0, 200), error: errorMessage(err) }),
      );
      renewals.set(uri, [...(renewals.get(uri) ?? []), renewed]);
    }
  }
  // once the server watches again: a change from then on is heard, whatever happened before is this notice
  for (const [uri, renewed] of renewals) {
    void Promise.all(renewed).then(() =>
      // as the child would name it: childNotification publishes it again
      childNotification(sessions, changes, tenant, child, { method: "notifications/resources/updated", params: { uri: childUri(child, uri) } }, log),
    );
  }
}

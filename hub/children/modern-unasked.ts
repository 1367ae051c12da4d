// What a child reached with the SDK v2 client (./modern-link.ts) says without being asked for it by
// a call's result: log lines (in 2026-07-28, sent during a request whose envelope names a level,
// which the hub sets from its caller's: hub/sessions/forward.ts), resource updates (on a
// subscriptions/listen stream naming the resources: ./modern-watch.ts), and, for a spawned child,
// that its process ended. A child "auto" settled on the 2025 era with sends the same
// notifications unasked and takes resources/subscribe as it is.
import type { Client } from "@modelcontextprotocol/client";
import type { Notification } from "@modelcontextprotocol/sdk/types.js";
import { SESSION_META_KEY } from "../../servers/lib/session-events.js";
import { isPlainObject } from "../protocol/jsonrpc.js";
import { ResourceWatch } from "./modern-watch.js";

export interface UnaskedEvents {
  /** A log line or a resource update, for the hub to hand on (hub/sessions/child-requests.ts). */
  notify?(notification: Notification): void;
  /** The connection ended (a spawned child's process exited). */
  closed?(): void;
  /** Something went wrong on the connection that no request hears of. */
  error?(error: Error): void;
}

const SUBSCRIPTION_METHODS = new Set(["resources/subscribe", "resources/unsubscribe"]);

export function wireUnasked(client: Client, server: string, timeoutMs: number, events: UnaskedEvents) {
  const watch = new ResourceWatch(client, server, timeoutMs);
  const notify = (notification: Notification) => events.notify?.(notification);
  client.setNotificationHandler("notifications/message", (n) => notify(n as Notification));
  client.setNotificationHandler("notifications/resources/updated", (n) => notify(n as Notification));
  client.onclose = () => events.closed?.();
  client.onerror = (error) => events.error?.(error);
  const modern = () => client.getNegotiatedProtocolVersion() === "2026-07-28";
  return {
    /** A resources/subscribe or /unsubscribe the listen stream answers, on the 2026 era; else undefined (sent as it is). */
    subscription(method: string, params: Record<string, unknown> | undefined): Promise<Record<string, never>> | undefined {
      if (!SUBSCRIPTION_METHODS.has(method) || !modern()) return undefined;
      const uri = String(params?.uri ?? "");
      const meta = isPlainObject(params?._meta) ? params._meta : {};
      // the hub names every request's session: a session's unsubscribe ends its own subscription only
      const session = typeof meta[SESSION_META_KEY] === "string" ? meta[SESSION_META_KEY] : "";
      const done = method === "resources/subscribe" ? watch.subscribe(uri, session) : watch.unsubscribe(uri, session);
      return done.then(() => ({}));
    },
    /** A client session ended (the hub tells every child it reached): what it subscribed to is let go. */
    sessionClosed: (session: string) => watch.forget(session),
    close: () => watch.close(),
  };
}

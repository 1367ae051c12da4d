// Where live views (hub/live/) meet the HTTP front: the view's page is served before CORS, the
// Host/Origin policy and the API key (the token in the URL is the credential), and the node
// server's upgrades go to a view's socket or to previews. A view's socket must come from the
// view's own page: its Origin is the hub's address as the browser reached it.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { MiddlewareHandler } from "hono";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { LiveViews } from "../live/views.js";
import type { Previews } from "../previews/previews.js";
import type { HubEnv } from "./security.js";
import { forwardingOf, type TrustedProxies } from "./trusted-proxies.js";

/** Serves live views' pages ahead of everything else of the app. */
export function liveRoute(live: LiveViews): MiddlewareHandler<HubEnv> {
  return async (c, next) => {
    const req = c.env.incoming;
    if (!live.claims(req.url)) return next();
    if (req.method !== "GET" && req.method !== "HEAD") return c.text("A live view is only looked at (GET).", 405);
    live.serveHttp(req, c.env.outgoing);
    return RESPONSE_ALREADY_SENT;
  };
}

/** The origin a view's own page has: the public URL's when set, else how this request reached the hub. */
function ownOrigin(req: IncomingMessage, proxies: TrustedProxies, publicUrl: string | undefined): string {
  if (publicUrl) return new URL(publicUrl).origin;
  const via = forwardingOf(req, proxies);
  return `${via.proto}://${via.host}`;
}

/** The node server's upgrade handler: live views' sockets, previews' WebSockets; anything else is refused. */
export function upgradesOf(previews: Previews, live: LiveViews, proxies: TrustedProxies) {
  return (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (live.claims(req.url)) return live.serveUpgrade(req, socket, head, ownOrigin(req, proxies, previews.config.publicUrl));
    previews.serveUpgrade(req, socket, head, forwardingOf(req, proxies));
  };
}

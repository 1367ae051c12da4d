// Where previews (hub/previews/) meet the HTTP front: their requests and WebSocket upgrades are
// taken before CORS, the Host/Origin policy and the API key (the token in the URL is the
// credential), with the forwarding facts a trusted proxy may vouch for.
import type { MiddlewareHandler } from "hono";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Previews } from "../previews/previews.js";
import type { HubEnv } from "./security.js";
import { forwardingOf, type TrustedProxies } from "./trusted-proxies.js";

/** Serves previews ahead of everything else of the app. */
export function previewRoute(previews: Previews, proxies: TrustedProxies): MiddlewareHandler<HubEnv> {
  // not async: every request passes here, and an async wrapper is one more promise per call
  return (c, next) => {
    const req = c.env.incoming;
    if (!previews.claims(req.url, req.headers.host)) return next();
    previews.serveHttp(req, c.env.outgoing, forwardingOf(req, proxies));
    return Promise.resolve(RESPONSE_ALREADY_SENT);
  };
}

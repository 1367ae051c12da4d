// Where previews (hub/previews/) meet the HTTP front: their requests and WebSocket upgrades are
// taken before CORS, the Host/Origin policy and the API key (the token in the URL is the
// credential), with the forwarding facts a trusted proxy may vouch for; and the MCP endpoints run
// knowing the address their client used, for the URLs hub_preview returns.
import type { IncomingMessage } from "node:http";
import type { MiddlewareHandler } from "hono";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Forwarding, Previews } from "../previews/previews.js";
import { withRequestBase } from "../previews/public-address.js";
import type { HubEnv } from "./security.js";
import type { TrustedProxies } from "./trusted-proxies.js";

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value)?.split(",")[0]?.trim() || undefined;

/** How the browser reached the hub: its own Host and scheme, or a trusted proxy's X-Forwarded-* for them. */
export function forwardingOf(req: IncomingMessage, proxies: TrustedProxies): Omit<Forwarding, "prefix"> {
  const peer = req.socket.remoteAddress ?? "unknown";
  const trusted = proxies.trusts(peer);
  const proto = (trusted && first(req.headers["x-forwarded-proto"])) || ("encrypted" in req.socket && req.socket.encrypted ? "https" : "http");
  const host = (trusted && first(req.headers["x-forwarded-host"])) || req.headers.host || "";
  return { proto: proto === "https" ? "https" : "http", host, for: proxies.clientAddress(peer, first(req.headers["x-forwarded-for"])) };
}

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

/** Around an MCP endpoint: what it runs knows the base URL its client used. */
export function knowRequestBase(proxies: TrustedProxies): MiddlewareHandler<HubEnv> {
  return (c, next) => {
    const via = forwardingOf(c.env.incoming, proxies);
    return via.host ? withRequestBase(`${via.proto}://${via.host}`, next) : next();
  };
}

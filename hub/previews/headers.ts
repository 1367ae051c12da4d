// What crosses the preview proxy in each direction. Toward the app: none of the hub's credentials
// (hub/http/security.ts accepts Authorization, X-API-Key, ?api_key= and a session token; MCP's own
// headers name sessions), the X-Forwarded-* an app needs to build its links, set by the hub alone,
// and only the preview's own cookies (./cookies.ts). Toward the browser: its cookies in the
// preview's jar, and in the path form, where every preview shares the hub's origin, nothing that
// reaches beyond the preview's own path (a service worker over the whole origin, clearing the
// origin's storage, redirects off the prefix).
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import { cookiesFromApp, cookiesToApp } from "./cookies.js";
import { SESSION_TOKEN_HEADER } from "../../servers/lib/session-events.js";

const CREDENTIALS = new Set(["authorization", "proxy-authorization", "x-api-key", SESSION_TOKEN_HEADER]);
// the client's claims about the way it came are replaced by what the hub knows
const FORWARDING = new Set(["forwarded", "x-real-ip"]);

export interface Forwarding {
  /** The scheme and host the browser used. */
  proto: string;
  host: string;
  /** The client's address. */
  for: string;
  /** `/preview/<token>` in the path form. */
  prefix?: string;
}

/** The request headers the app gets; `jar` names the preview's cookies (./cookies.ts). */
export function toApp(headers: IncomingHttpHeaders, via: Forwarding, jar: string): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (CREDENTIALS.has(lower) || FORWARDING.has(lower) || lower === "cookie" || lower.startsWith("mcp-") || lower.startsWith("x-forwarded-")) continue;
    out[lower] = value;
  }
  const cookie = cookiesToApp(headers.cookie, jar);
  if (cookie) out.cookie = cookie;
  out["x-forwarded-for"] = via.for;
  out["x-forwarded-proto"] = via.proto;
  out["x-forwarded-host"] = via.host;
  if (via.prefix) out["x-forwarded-prefix"] = via.prefix;
  return out;
}

/** The path and query the app gets: the hub's ?api_key= taken out. */
export function pathToApp(pathAndQuery: string): string {
  const q = pathAndQuery.indexOf("?");
  if (q < 0) return pathAndQuery;
  const params = new URLSearchParams(pathAndQuery.slice(q + 1));
  if (!params.has("api_key")) return pathAndQuery;
  params.delete("api_key");
  const rest = params.toString();
  return pathAndQuery.slice(0, q) + (rest ? `?${rest}` : "");
}

// response headers whose reach is the whole origin: in the path form, the hub's own origin
const ORIGIN_WIDE = ["service-worker-allowed", "clear-site-data"];

/** Mend the app's response headers in place: its cookies into its jar, and in the path form (prefix `/preview/<token>`) all else that would leave it. */
export function fromApp(headers: IncomingHttpHeaders | OutgoingHttpHeaders, jar: string, prefix?: string): void {
  const setCookie = headers["set-cookie"];
  if (setCookie !== undefined) {
    const lines = cookiesFromApp((Array.isArray(setCookie) ? setCookie : [setCookie]).map(String), jar, prefix);
    if (lines.length) headers["set-cookie"] = lines;
    else delete headers["set-cookie"];
  }
  if (!prefix) return;
  for (const name of ORIGIN_WIDE) delete headers[name];
  const location = headers.location;
  // an app redirecting to its own "/login" means the login under its prefix
  if (typeof location === "string" && location.startsWith("/") && !location.startsWith("//") && !location.startsWith(`${prefix}/`)) {
    headers.location = prefix + location;
  }
}

// Who may talk to the hub: the API key, the Origin/Host checks against DNS rebinding, CORS, and
// the client identity used for rate limits.
import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { getConnInfo } from "@hono/node-server/conninfo";
import type { HubConfig } from "./config.js";
import { jsonRpcError } from "./jsonrpc-response.js";

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

const sha256 = (value: string) => createHash("sha256").update(value).digest();

/** The API key from `Authorization: Bearer`, `X-API-Key` or `?api_key=`. */
export function presentedKey(req: Request): string | undefined {
  const auth = req.headers.get("authorization");
  if (auth?.toLowerCase().startsWith("bearer ")) return auth.slice(7).trim();
  const header = req.headers.get("x-api-key");
  if (header) return header.trim();
  return new URL(req.url).searchParams.get("api_key") ?? undefined;
}

export function apiKeyAuth(apiKey: string | undefined, isTrusted: (req: Request) => boolean): MiddlewareHandler {
  const expected = apiKey ? sha256(apiKey) : undefined;
  return async (c, next) => {
    if (!expected || c.req.method === "OPTIONS" || isTrusted(c.req.raw)) return next();
    const key = presentedKey(c.req.raw);
    // comparing digests keeps the comparison constant-time whatever the lengths
    if (key !== undefined && timingSafeEqual(sha256(key), expected)) return next();
    return jsonRpcError(401, -32001, key === undefined
      ? "Unauthorized: this hub requires an API key (Authorization: Bearer <key>, X-API-Key: <key> or ?api_key=<key>)."
      : "Unauthorized: the API key is not valid.", { headers: { "WWW-Authenticate": 'Bearer realm="agentbox"' } });
  };
}

function hostnameOf(hostHeader: string): string {
  try {
    return new URL(`http://${hostHeader}`).hostname;
  } catch {
    return "";
  }
}

function isLoopbackBind(host: string): boolean {
  return LOOPBACK_HOSTS.has(host) || host.startsWith("127.");
}

export class OriginPolicy {
  private readonly corsOrigins: Set<string>;
  private readonly anyOrigin: boolean;
  private readonly loopbackOnly: boolean;

  constructor(private readonly config: Pick<HubConfig, "host" | "corsOrigins" | "allowedHosts">) {
    this.corsOrigins = new Set(config.corsOrigins.map((o) => o.replace(/\/$/, "")));
    this.anyOrigin = this.corsOrigins.has("*");
    this.loopbackOnly = isLoopbackBind(config.host);
  }

  /** A browser origin allowed to call the hub: same origin, configured, or loopback. */
  allowsOrigin(origin: string, hostHeader: string | undefined): boolean {
    if (this.anyOrigin || this.corsOrigins.has(origin)) return true;
    // no Origin header (anything but a browser): nothing to check, and new URL("") throws
    if (!origin) return false;
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return false;
    }
    if (hostHeader && url.host === hostHeader) return true;
    return LOOPBACK_HOSTS.has(url.hostname) || url.hostname.startsWith("127.");
  }

  /** With a loopback bind, a Host header naming anything else is a DNS-rebinding attempt. */
  allowsHost(hostHeader: string | undefined): boolean {
    if (!hostHeader) return true;
    const name = hostnameOf(hostHeader);
    if (this.config.allowedHosts.includes(name) || this.config.allowedHosts.includes(hostHeader)) return true;
    if (!this.loopbackOnly) return this.config.allowedHosts.length === 0;
    return LOOPBACK_HOSTS.has(name) || name.startsWith("127.");
  }

  middleware(): MiddlewareHandler {
    return async (c, next) => {
      const host = c.req.header("host");
      if (!this.allowsHost(host)) {
        return jsonRpcError(403, -32000, `Forbidden: Host '${host}' is not allowed (DNS rebinding protection). Add it to AGENTBOX_ALLOWED_HOSTS if it is yours.`);
      }
      const origin = c.req.header("origin");
      if (origin && !this.allowsOrigin(origin, host)) {
        return jsonRpcError(403, -32000, `Forbidden: Origin '${origin}' is not allowed. Add it to AGENTBOX_CORS_ORIGINS to let that page call the hub.`);
      }
      return next();
    };
  }
}

/** Rate limits and implicit sessions are per client: its API key when it has one, else its address. */
export function clientKey(c: Parameters<MiddlewareHandler>[0]): string {
  const key = presentedKey(c.req.raw);
  if (key) return `key-${sha256(key).toString("hex").slice(0, 16)}`;
  try {
    return `ip-${(getConnInfo(c).remote.address ?? "unknown").replace(/[^a-zA-Z0-9.-]/g, "_")}`;
  } catch {
    return "ip-unknown";
  }
}

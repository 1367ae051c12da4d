// Who may talk to the hub: API keys naming tenants, session tokens of code calling back, the
// Host/Origin checks against DNS rebinding, and the client identity of sessionless requests.
import { createHash } from "node:crypto";
import { isIP } from "node:net";
import type { Context, MiddlewareHandler } from "hono";
import type { HttpBindings } from "@hono/node-server";
import { getConnInfo } from "@hono/node-server/conninfo";
import { SESSION_TOKEN_HEADER } from "../../servers/lib/session-events.js";
import type { HubConfig } from "../config/config.js";
import type { HubServices } from "./services.js";
import type { ServedTenant } from "../tenants/served-tenant.js";
import { jsonRpcError } from "../protocol/jsonrpc.js";
import type { ClientSession } from "../sessions/registry.js";
import type { Grant, ScopeShortfall, SessionView } from "../catalog/selection.js";
import { scopeShortfall } from "../sessions/scope-shortfall.js";
import { tenantForKey } from "../tenants/tenants.js";
import { requestBaseOf, type TrustedProxies } from "./trusted-proxies.js";
import type { RequestBase } from "../previews/public-address.js";
import { hangUpOf, type Cancellation } from "../protocol/cancellation.js";
import { ALL_SCOPE, type ProtectedResource } from "./oauth/resource.js";
import { PersonRefused } from "../tenants/people.js";

const MAX_HOST_VERDICTS = 1000;
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

/** What the hub's Hono app knows of a request: Node's request and reply, and who sent it. */
export interface HubEnv {
  Bindings: HttpBindings;
  Variables: { caller: Caller };
}

export type HubContext = Context<HubEnv>;

/** Who a request comes from, decided once by `authenticate` and read by every endpoint. */
export class Caller {
  private key?: string;
  private hung?: Cancellation;

  constructor(
    private readonly c: HubContext,
    private readonly proxies: TrustedProxies,
    readonly tenant: ServedTenant,
    /** The session code is calling back as, when the request carries a session token. */
    readonly session?: ClientSession,
    /** What a person's token allows (its scopes), when they signed in with OAuth and scopes are enforced; undefined: everything. */
    readonly grant?: Grant,
    /** The 403 insufficient_scope answer for this request (hub/http/oauth/resource.ts), when it carries a grant. */
    private readonly challenge?: (shortfall: ScopeShortfall, id: string | number | null) => Response,
  ) {}

  /**
   * 403 insufficient_scope for a request (one JSON-RPC message) that this sign-in's scopes alone
   * keep from `view`, before anything starts answering it; undefined for anything else.
   */
  refuseScope(view: SessionView, body: unknown): Response | undefined {
    if (!this.grant || !this.challenge) return undefined;
    const shortfall = scopeShortfall(this.tenant, view, body);
    if (!shortfall) return undefined;
    const id = (body as { id?: unknown }).id;
    return this.challenge(shortfall, typeof id === "string" || typeof id === "number" ? id : null);
  }

  /** The address this request reached the hub by, for the links made while answering it (hub/previews/public-address.ts). */
  readonly base: RequestBase = () => requestBaseOf(this.c.env.incoming, this.proxies);

  /** The client hanging up before its reply is written (hub/protocol/cancellation.ts). */
  get hangUp(): Cancellation {
    this.hung ??= hangUpOf(this.c.env.outgoing);
    return this.hung;
  }

  /** Rate limits and implicit sessions are per client: its API key when it has one, else its address. */
  get clientKey(): string {
    this.key ??= clientKeyOf(this.c, this.proxies);
    return this.key;
  }
}

/**
 * Who is asking, decided once per request: code calling back as one session (its session token),
 * the tenant whose API key is presented, a person whose access token is presented (OAuth), or the
 * keyless tenant when the hub has neither keys nor sign-in. Sets the request's Caller and returns
 * nothing, or returns the refusal to send. Only a token's check waits (for the issuer's keys).
 */
export function authenticate(
  hub: HubServices,
  proxies: TrustedProxies,
  c: HubContext,
  oauth?: ProtectedResource,
): Response | undefined | Promise<Response | undefined> {
  const token = c.req.header(SESSION_TOKEN_HEADER);
  if (token !== undefined) {
    const session = hub.sessions.withToken(token);
    if (!session) {
      return jsonRpcError(401, -32001, "Unauthorized: this session token is not valid (its session may have ended); tools can no longer be called with it.");
    }
    c.set("caller", new Caller(c, proxies, session.tenant, session));
    return undefined;
  }
  // a keyless hub ignores a key a client sends anyway (a client configured with one header for all)
  const key = hub.keylessTenant ? undefined : presentedKey(c.req.raw);
  const tenant = hub.keylessTenant ?? (key !== undefined ? tenantForKey(hub.tenants, key) : undefined);
  if (tenant) {
    c.set("caller", new Caller(c, proxies, tenant));
    return undefined;
  }
  if (oauth) {
    const bearer = c.req.header("authorization")?.match(/^bearer\s+(\S+)\s*$/i)?.[1];
    if (bearer !== undefined) return signIn(hub, proxies, c, oauth, bearer);
    return jsonRpcError(
      401,
      -32001,
      key === undefined
        ? "Unauthorized: sign in with OAuth (the authorization server is named in the WWW-Authenticate header's resource_metadata), or send an API key."
        : "Unauthorized: the API key is not valid, and a token is only taken as Authorization: Bearer <token>.",
      {
        headers: {
          "WWW-Authenticate": oauth.challenge(c.req.path, key === undefined ? undefined : { error: "invalid_token", description: "not a valid API key" }),
        },
      },
    );
  }
  return jsonRpcError(
    401,
    -32001,
    key === undefined
      ? "Unauthorized: this hub requires an API key (Authorization: Bearer <key>, X-API-Key: <key> or ?api_key=<key>)."
      : "Unauthorized: the API key is not valid.",
    { headers: { "WWW-Authenticate": 'Bearer realm="agentbox"' } },
  );
}

/** A person's access token: checked, then their tenant (made on their first sign-in). */
async function signIn(hub: HubServices, proxies: TrustedProxies, c: HubContext, oauth: ProtectedResource, token: string): Promise<Response | undefined> {
  const verdict = await oauth.verifier.verify(token);
  if ("status" in verdict) {
    const headers: Record<string, string> = { "WWW-Authenticate": oauth.challenge(c.req.path, verdict) };
    if (verdict.status === 503) headers["Retry-After"] = "30";
    const what = verdict.status === 503 ? "Service unavailable" : "Unauthorized";
    return jsonRpcError(verdict.status, -32001, `${what}: ${verdict.description}.`, { headers });
  }
  let grant: Grant | undefined;
  if (oauth.config.scopes) {
    const known = verdict.scopes.filter((s) => oauth.scopes().includes(s));
    if (known.length === 0) {
      const message = `the token carries none of this hub's scopes (${oauth.scopes().join(", ")}); ask for ${ALL_SCOPE}.`;
      return oauth.insufficientScope(c.req.path, { scope: ALL_SCOPE, message });
    }
    grant = oauth.grantOf(known);
  }
  let tenant: ServedTenant;
  try {
    tenant = await hub.personTenant(verdict.person);
  } catch (err) {
    if (!(err instanceof PersonRefused)) throw err;
    return jsonRpcError(503, -32001, `Service unavailable: ${err.message}`);
  }
  c.set("caller", new Caller(c, proxies, tenant, undefined, grant, (shortfall, id) => oauth.insufficientScope(c.req.path, shortfall, id)));
  return undefined;
}

/** The caller `authenticate` found for this request. */
export function callerOf(c: HubContext): Caller {
  return c.get("caller");
}

const bare = (hostname: string) => hostname.replace(/^\[|\]$/g, "");
const isLoopbackName = (hostname: string) => LOOPBACK_HOSTS.has(hostname) || (isIP(bare(hostname)) === 4 && hostname.startsWith("127."));

function hostnameOf(hostHeader: string): string | undefined {
  try {
    const url = new URL(`http://${hostHeader}`);
    // "a@b" or a path would make the header mean something else than a host and port
    return url.username || url.password || url.pathname !== "/" || url.search || url.hash ? undefined : url.hostname;
  } catch {
    return undefined;
  }
}

/**
 * Without an API key the hub trusts the network position of its caller, so a web page must not be
 * able to reach it: a DNS-rebinding page sends its own name as Host, a cross-site page its own
 * Origin. Names are compared parsed and exactly, never by prefix. With a key, the key is the gate.
 */
export class OriginPolicy {
  private readonly corsOrigins: Set<string>;
  private readonly anyOrigin: boolean;
  private readonly allowedHosts: Set<string>;
  private readonly hostVerdicts = new Map<string, boolean>();

  constructor(
    config: Pick<HubConfig, "corsOrigins" | "allowedHosts">,
    private readonly keyed: boolean,
  ) {
    this.corsOrigins = new Set(config.corsOrigins.map((o) => o.replace(/\/$/, "")));
    this.anyOrigin = this.corsOrigins.has("*");
    this.allowedHosts = new Set(config.allowedHosts.map((h) => h.toLowerCase()));
  }

  /** A browser origin allowed to call the hub: configured, loopback, or the page the hub itself served. */
  allowsOrigin(origin: string, hostHeader: string | undefined): boolean {
    if (this.anyOrigin || this.corsOrigins.has(origin)) return true;
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return false;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") return false;
    // same origin is safe only because the Host it names has passed allowsHost
    if (hostHeader && url.host === hostHeader.toLowerCase() && this.allowsHost(hostHeader)) return true;
    return isLoopbackName(url.hostname);
  }

  /** A Host a rebinding page cannot forge: a loopback name, an IP literal, or one configured. */
  allowsHost(hostHeader: string | undefined): boolean {
    if (!hostHeader) return false;
    // a client sends the same Host on every request: parsing it once per distinct value is enough
    let verdict = this.hostVerdicts.get(hostHeader);
    if (verdict === undefined) {
      const name = hostnameOf(hostHeader);
      verdict =
        name !== undefined &&
        (isLoopbackName(name) || isIP(bare(name)) !== 0 || this.allowedHosts.has(name) || this.allowedHosts.has(hostHeader.toLowerCase()));
      if (this.hostVerdicts.size >= MAX_HOST_VERDICTS) this.hostVerdicts.clear();
      this.hostVerdicts.set(hostHeader, verdict);
    }
    return verdict;
  }

  middleware(): MiddlewareHandler {
    // not async: every request passes here, and an async wrapper is one more promise per call
    return (c, next) => {
      if (this.keyed) return next();
      const host = c.req.header("host");
      if (!this.allowsHost(host)) {
        return Promise.resolve(
          jsonRpcError(
            403,
            -32000,
            `Forbidden: Host '${host ?? ""}' is not allowed. Without an API key the hub answers only to loopback names, IP addresses and ` +
              `AGENTBOX_ALLOWED_HOSTS (DNS-rebinding protection); add the name there, or set an API key.`,
          ),
        );
      }
      const origin = c.req.header("origin");
      if (origin && !this.allowsOrigin(origin, host)) {
        return Promise.resolve(
          jsonRpcError(403, -32000, `Forbidden: Origin '${origin}' is not allowed. Add it to AGENTBOX_CORS_ORIGINS to let that page call the hub.`),
        );
      }
      return next();
    };
  }
}

function clientKeyOf(c: HubContext, proxies: TrustedProxies): string {
  const key = presentedKey(c.req.raw);
  if (key) return `key-${sha256(key).toString("hex").slice(0, 16)}`;
  return `ip-${clientAddress(c, proxies).replace(/[^a-zA-Z0-9.-]/g, "_")}`;
}

function clientAddress(c: HubContext, proxies: TrustedProxies): string {
  let peer: string;
  try {
    peer = getConnInfo(c).remote.address ?? "unknown";
  } catch {
    return "unknown";
  }
  return proxies.clientAddress(peer, c.req.header("x-forwarded-for"));
}

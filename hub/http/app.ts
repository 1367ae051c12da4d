// The HTTP face of the hub, composed in one place. A request to /mcp passes CORS (browsers only),
// the Host/Origin policy, one guard (who is asking, body size, draining), then hub/http/endpoints/mcp.ts.
import { Hono, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import type { HubServices } from "./services.js";
import { jsonRpcError } from "../protocol/jsonrpc.js";
import { landingFor } from "./landing.js";
import { metricsGate } from "./metrics-gate.js";
import { mountPlayground } from "../playground/route.js";
import { mountTraceViewer } from "../playground/trace-viewer.js";
import { LegacySseEndpoint } from "./endpoints/legacy-sse.js";
import { mcpEndpoint } from "./endpoints/mcp.js";
import { ModernEndpoint } from "../modern/endpoint.js";
import { drainingRefusal, repliesOf } from "./replica.js";
import { authenticate, callerOf, OriginPolicy, type HubContext, type HubEnv } from "./security.js";
import { requestBaseOf, TrustedProxies } from "./trusted-proxies.js";
import { METADATA_PATHS, ProtectedResource } from "./oauth/resource.js";
import { previewRoute } from "./preview-route.js";
import { recordingRoute } from "./recording-route.js";
import { liveRoute } from "./live-route.js";
import { httpTracing } from "../observability/tracing.js";

// Mcp-Method and Mcp-Name: what a 2026-07-28 request repeats of its body (hub/modern/endpoint.ts)
const MCP_HEADERS = [
  "Content-Type",
  "Accept",
  "Authorization",
  "X-API-Key",
  "Mcp-Session-Id",
  "MCP-Protocol-Version",
  "Mcp-Method",
  "Mcp-Name",
  "Last-Event-ID",
];

/**
 * What every served path checks, in one pass: who is asking (hub/http/security.ts), the body's size,
 * and, while draining, whether the request would open a session. Hono's bodyLimit asks for the
 * Web body stream of every request, which makes @hono/node-server build a full Request around
 * Node's stream (a sixth of the hub's CPU per call): a declared length is checked from the
 * header alone, and only chunked bodies go through the streaming check.
 */
function guard(hub: HubServices, proxies: TrustedProxies, oauth?: ProtectedResource): MiddlewareHandler<HubEnv> {
  const maxBytes = hub.config.maxBodyBytes;
  const tooLarge = () => jsonRpcError(413, -32600, `Request body too large: the limit is ${maxBytes} bytes (AGENTBOX_MAX_BODY_BYTES).`);
  const streamingLimit = bodyLimit({ maxSize: maxBytes, onError: tooLarge });
  const replies = repliesOf(hub);
  const pass = (c: HubContext, next: () => Promise<void>, refusedByAuth: Response | undefined) => {
    const declaredTooLarge = Number(c.req.header("content-length") ?? 0) > maxBytes;
    const refused = refusedByAuth ?? (declaredTooLarge ? tooLarge() : undefined) ?? drainingRefusalOf(hub, c);
    if (refused) return Promise.resolve(refused);
    // a drain waits for the replies being made (./replica.ts)
    return replies.track(c.req.header("transfer-encoding") !== undefined ? streamingLimit(c, next) : next());
  };
  return (c, next) => {
    if (c.req.method === "OPTIONS") return next();
    const verdict = authenticate(hub, proxies, c, oauth);
    // an API key is decided at once; only a person's token waits for its check
    return verdict instanceof Promise ? verdict.then((refused) => pass(c, next, refused)) : pass(c, next, verdict);
  };
}

/**
 * While draining, a legacy SSE stream (which would start a session) gets 503 so the router retries
 * it elsewhere. A sessionless POST /mcp is judged once its body is read (./endpoints/mcp.ts): a
 * 2026-07-28 retry answering input_required must still reach its call here. Requests of sessions
 * already here, and code in a child calling tools for one of them, go on as usual.
 */
function drainingRefusalOf(hub: HubServices, c: HubContext): Response | undefined {
  return hub.draining && c.req.method === "GET" && c.req.path === "/sse" ? drainingRefusal(hub) : undefined;
}

export function createApp(hub: HubServices): Hono<HubEnv> {
  const app = new Hono<HubEnv>();
  const oauth = hub.config.oauth
    ? new ProtectedResource(
        hub.config.oauth,
        () => hub.config.previews.publicUrl ?? hub.listeningBase,
        () => Object.keys(hub.config.mcpServers),
        hub.clock,
      )
    : undefined;
  // with keys or sign-in, the credential is the gate (not the Host and Origin)
  const keyed = hub.tenants.some((t) => t.keyDigest) || oauth !== undefined;
  const origins = new OriginPolicy(hub.config, keyed);
  const mcp = mcpEndpoint(hub, new ModernEndpoint(hub));
  const legacy = new LegacySseEndpoint(hub);
  const proxies = new TrustedProxies(hub.config.trustedProxies);
  // a preview's token is its credential, and a browser opening it sends nothing else: first of all
  app.use("*", previewRoute(hub.previews, proxies));
  // so is a recording's download token
  app.use("/recordings/*", recordingRoute(hub.recordings));
  // so is a live view's (hub/live/)
  app.use("/live/*", liveRoute(hub.live));
  // before the checks, so the span holds everything the request costs (OpenTelemetry; a no-op unless OTEL_* asks for traces)
  for (const path of ["/mcp", "/v1/mcp", "/messages"]) app.use(path, httpTracing(path));

  app.get("/healthz", (c) => c.json({ status: "ok" }));
  app.get("/readyz", (c) => {
    const servers = hub.status().servers.map((s) => ({ name: s.name, state: s.state }));
    const reason = hub.draining ? { reason: "draining: shutting down, taking no new sessions" } : {};
    return c.json({ ready: hub.ready, ...reason, servers }, hub.ready ? 200 : 503);
  });

  const browserCors = cors({
    origin: (origin, c) => (origins.allowsOrigin(origin, c.req.header("host")) ? origin : null),
    allowMethods: ["GET", "POST", "DELETE", "OPTIONS"],
    allowHeaders: MCP_HEADERS,
    exposeHeaders: ["Mcp-Session-Id", "MCP-Protocol-Version", "WWW-Authenticate", "Retry-After"],
    maxAge: 600,
  });
  // CORS headers mean something only to a browser, which always sends Origin; setting them on
  // every reply makes Hono rebuild each Response (an undici Response and a web stream per call)
  app.use("*", (c, next) => (c.req.header("origin") ? browserCors(c, next) : next()));
  app.use("*", origins.middleware());
  // the page's own files hold no data: served before the key check so the page can ask for the key
  // where a client that got a 401 learns how to sign in (RFC 9728): public, like the page
  if (oauth) for (const path of METADATA_PATHS) app.get(path, (c) => c.json(oauth.metadata(c.req.path)));
  mountPlayground(app);
  // the viewer's pages let frames load only its snapshots, named at the origin the browser used
  mountTraceViewer(app, {
    originOf: (c) => requestBaseOf(c.env.incoming, proxies),
  });
  // only what the hub serves asks for a key: anything else is a plain 404, so a client probing for
  // OAuth (/.well-known/…, /register, /authorize) learns there is none instead of waiting for a login
  const guarded = guard(hub, proxies, oauth);
  // a person's browser at / or /mcp gets a page saying where to go (it holds nothing the key guards);
  // one layer with the guard, not two: each layer of Hono's chain is two promises on every call
  const pageOrGuard: MiddlewareHandler<HubEnv> = (c, next) => {
    const page = landingFor(c, keyed);
    return page ? Promise.resolve(page) : guarded(c, next);
  };
  for (const path of ["/", "/mcp", "/v1/mcp"]) app.use(path, pageOrGuard);
  for (const path of ["/sse", "/messages"]) app.use(path, guarded);
  app.use("/metrics", metricsGate(hub, guarded));

  const endpoints = { mcp: "/mcp", mcpV1: "/v1/mcp", legacySse: "/sse", playground: "/playground", health: "/healthz", ready: "/readyz", metrics: "/metrics" };
  app.get("/", (c) => c.json({ ...hub.status(keyed ? callerOf(c).tenant : undefined), endpoints }));
  app.get("/metrics", async (c) => c.text(await hub.metrics.render(), 200, { "Content-Type": hub.metrics.registry.contentType }));
  for (const path of ["/mcp", "/v1/mcp"]) app.on(["GET", "POST", "DELETE"], path, mcp);
  app.get("/sse", (c) => legacy.open(c));
  app.post("/messages", (c) => legacy.message(c));

  app.notFound((c) => {
    // a client that got a 401 looks for OAuth next: tell it how this hub wants its key instead
    const probing = /^\/(\.well-known\/(oauth|openid)|register|authorize|token)/.test(c.req.path);
    const hint = !probing
      ? ""
      : oauth
        ? ` This hub signs people in at ${oauth.config.issuer} (its metadata: ${oauth.metadataUrl("/mcp")}).`
        : ' This hub does not use OAuth: send its API key as Authorization: Bearer <key> (mcp-remote: --header "Authorization: Bearer <key>").';
    return c.json({ error: `No route for ${c.req.method} ${c.req.path}. The MCP endpoint is /mcp.${hint}` }, 404);
  });
  app.onError((err, c) => {
    hub.log.error("request failed", { path: c.req.path, error: err.message });
    return jsonRpcError(500, -32603, `Internal error: ${err.message}`);
  });
  return app;
}

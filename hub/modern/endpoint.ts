// Requests of the 2026-07-28 protocol revision on /mcp: no session, every request carries its
// protocol version, client info and capabilities in params._meta. Each tenant has one SDK
// createMcpHandler (its listen streams hear that tenant's changes only), built on its first such
// request; its factory builds a server per request over the tenant's default modern context
// (./server.ts). Which requests come here is decided by hub/http/endpoints/mcp.ts (with mayBeModern
// and modernRoute, ./classify.ts), after the HTTP front's checks (key, Origin, a draining replica);
// a plain tools/call takes the direct path (./direct.ts), which hands anything unusual to the SDK.
import { createMcpHandler, type McpHttpHandler, type McpRequestContext } from "@modelcontextprotocol/server";
import { paramHeaderMismatch } from "./param-headers.js";
import { urlSelects, viewForUrl, type Grant, type SessionView } from "../catalog/selection.js";
import { createModernServer, type AdoptedCall, type ModernCtx } from "./server.js";
import type { ModernServices } from "./services.js";
import { answerModern, type ModernRoute } from "./direct.js";
import { PendingCalls } from "./pending-calls.js";
import type { TenantChange } from "../sessions/changes.js";
import type { ServedTenant } from "../tenants/served-tenant.js";
import { answerTasks } from "../tasks/answer.js";
import { listenedUris, ListenSubscriptions } from "./listen-subscriptions.js";
import { whileStreaming } from "./listen-stream.js";
import type { RequestBase } from "../previews/public-address.js";
import type { Cancellation } from "../protocol/cancellation.js";

/** Who sent a 2026 request, as the HTTP front decided (hub/http/security.ts). */
export interface ModernCaller {
  tenant: ServedTenant;
  /** What the person's sign-in allows (hub/catalog/selection.ts), narrowing this request's view; none for an API key. */
  grant?: Grant;
  /** The address the request came by (hub/previews/public-address.ts). */
  base: RequestBase;
  /** The client hanging up before its reply is written. */
  hangUp: Cancellation;
  /** The HTTP front's 403 insufficient_scope for a request the grant alone keeps from the view, answered before any stream starts. */
  refuseScope(view: SessionView, body: unknown): Response | undefined;
}

/** Where the factory finds the request's context: the SDK passes authInfo through untouched. */
const CONTEXT_KEY = "agentbox/context";

export class ModernEndpoint {
  private readonly handlers = new Map<ServedTenant, McpHttpHandler>();
  private readonly listens = new Map<ServedTenant, ListenSubscriptions>();
  private readonly unsubscribes = new Map<ServedTenant, () => void>();
  /** Tool calls waiting for their 2026 clients' answers (input_required), across every tenant. */
  private readonly pending: PendingCalls;
  constructor(private readonly hub: ModernServices) {
    this.pending = new PendingCalls(hub.secrets, hub.clock, hub.config.replica);
    hub.changes.onEnd(() => this.close());
    hub.changes.onDropped((tenant) => this.forget(tenant));
  }

  /** A tenant no longer served: its handler (and listen streams) closed, nothing of it kept. */
  private async forget(tenant: ServedTenant): Promise<void> {
    const handler = this.handlers.get(tenant);
    this.handlers.delete(tenant);
    this.listens.delete(tenant);
    this.unsubscribes.get(tenant)?.();
    this.unsubscribes.delete(tenant);
    await handler?.close();
  }

  /** `body` is the parsed request alone: the closures below keep it while the call runs or waits in its server's queue, and its text must not stay with it. */
  async handle(req: Request, body: unknown, caller: ModernCaller, route: ModernRoute): Promise<Response> {
    const { tenant, grant } = caller;
    const session = this.hub.modernSession(tenant);
    session.touch();
    const id = (body as { id?: string | number } | null)?.id;
    // selection hook (hub/catalog/selection.ts): ?servers= ?tools= ?catalog= apply to this request alone
    const selected = urlSelects(req.url) ? viewForUrl(session.view, req.url, id) : session.view;
    if (selected instanceof Response) return selected;
    const view = selected.within(grant);
    const outOfScope = caller.refuseScope(view, body);
    if (outOfScope) return outOfScope;
    // the SDK checks Mcp-Param-* only for its high-level server; this one is low-level (./param-headers.ts)
    const mismatch = paramHeaderMismatch(req, body, view);
    if (mismatch) return mismatch;
    const plain: ModernCtx = { hub: this.hub, session, view, pending: this.pending, requestBase: caller.base };
    // the tasks extension's requests, which the SDK does not serve on this revision
    const answered = route.kind === "modern" && route.messageKind === "request" ? answerTasks(plain, this.hub.tasks, tenant.name, req, body) : undefined;
    // mostly settled at once (not a tasks request): awaited only when it is not, a turn of the event loop saved per call
    const tasked = answered instanceof Promise ? await answered : answered;
    if (tasked instanceof Response) return tasked;
    const context: ModernCtx = tasked ? { ...plain, asTask: tasked } : plain;
    const viaSdk = (adopted?: AdoptedCall) => {
      const extra = { [CONTEXT_KEY]: adopted ? { ...context, adopted } : context };
      return this.handlerOf(tenant).fetch(req, { parsedBody: body, authInfo: { token: "", clientId: tenant.name, scopes: [], extra } });
    };
    // a listen naming resources makes their servers watch them while its stream is open
    const uris = listenedUris(body);
    if (uris) return whileStreaming(id, () => this.listensOf(tenant).acquire(context, uris), viaSdk);
    // a call whose rounds end in a task is the SDK's to serve round by round (the direct path answers plain results only)
    return tasked ? viaSdk() : answerModern(context, req, body, route, caller.hangUp, viaSdk);
  }

  /** Ends every listen stream (the hub is stopping). */
  private async close(): Promise<void> {
    await Promise.allSettled([...this.handlers.values()].map((h) => h.close()));
    this.handlers.clear();
  }

  private listensOf(tenant: ServedTenant): ListenSubscriptions {
    let listens = this.listens.get(tenant);
    if (!listens) this.listens.set(tenant, (listens = new ListenSubscriptions()));
    return listens;
  }

  private handlerOf(tenant: ServedTenant): McpHttpHandler {
    let handler = this.handlers.get(tenant);
    if (handler) return handler;
    handler = createMcpHandler(serverFor, {
      legacy: "reject",
      maxRequestBodySize: this.hub.config.maxBodyBytes,
      onerror: (error) => this.hub.log.debug("2026-07-28 request refused or failed", { tenant: tenant.name, error: error.message }),
    });
    const { notify } = handler;
    const unsubscribe = this.hub.changes.subscribe(tenant, (change: TenantChange) => {
      if (change.kind === "tools") notify.toolsChanged();
      else if (change.kind === "prompts") notify.promptsChanged();
      else if (change.kind === "resources") notify.resourcesChanged();
      else if (change.kind === "resource") notify.resourceUpdated(change.uri);
    });
    this.unsubscribes.set(tenant, unsubscribe);
    this.handlers.set(tenant, handler);
    return handler;
  }
}

function serverFor({ authInfo }: McpRequestContext) {
  const context = authInfo?.extra?.[CONTEXT_KEY] as ModernCtx | undefined;
  // only ModernEndpoint.handle calls these handlers, and always with a context
  if (!context) throw new Error("2026-07-28 request without the hub's context");
  return createModernServer(context);
}

// The MCP face of the hub for one client session: an SDK Server whose handlers answer from the
// merged catalog and route each call to the child that owns it, carrying progress, cancellation
// and the client session id across.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type CallToolResult,
  type Resource,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { RETRY_AFTER_META_KEY, SESSION_META_KEY, TOKEN_META_KEY } from "../servers/lib/session-events.js";
import { errorMessage, type Logger } from "../servers/lib/log.js";
import { ChildUnavailableError, LISTED_STATES, MessageTooLargeError, type Child } from "./child.js";
import { HUB_INSTRUCTIONS, mergeInstructions, selectedServers } from "./instructions.js";
import { protocolError, withoutCodePrefix } from "./jsonrpc-response.js";
import type { RateLimits } from "./limits.js";
import type { HubMetrics } from "./metrics.js";
import { QueueFullError } from "./queue.js";
import { SessionView } from "./selection.js";
import type { ServedTenant } from "./hub.js";
import type { ClientSession, InflightCall } from "./sessions.js";

export const RATE_LIMITED_CODE = -32029;
const MAX_RESOURCES_PER_CHILD = 10_000;

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;
type Params = Record<string, unknown> & { _meta?: Record<string, unknown> };

export interface RouterDeps {
  version: string;
  limits: RateLimits;
  metrics: HubMetrics;
  log: Logger;
  /** Tools the hub serves itself (hub_*), checked before the children's. */
  localTools?: LocalTools;
}

export interface LocalTools {
  list(): import("@modelcontextprotocol/sdk/types.js").Tool[];
  call(name: string, args: Record<string, unknown>, session: ClientSession, extra: Extra): Promise<CallToolResult> | undefined;
}

export class Router {
  constructor(private readonly deps: RouterDeps) {}

  /** Everything a tenant's servers offer, before configured defaults and URLs narrow it. */
  unrestricted(tenant: ServedTenant): SessionView {
    return new SessionView({
      catalog: tenant.catalog,
      hubTools: () => this.deps.localTools?.list() ?? [],
      serverNames: () => tenant.children.map((c) => c.name),
    });
  }

  /** @param view what this session may see and call (hub/selection.ts) */
  createServer(session: ClientSession, view: SessionView): Server {
    const server = new Server(
      { name: "agentbox", version: this.deps.version, title: "agentbox" },
      {
        capabilities: {
          tools: { listChanged: true },
          resources: { listChanged: true, subscribe: true },
          prompts: { listChanged: true },
          logging: {},
          completions: {},
        },
        // the selection hook may add to the hub's sentence (search mode: how to find tools)
        instructions: mergeInstructions(view.instructions(HUB_INSTRUCTIONS), selectedServers(session.tenant.children, view)),
      },
    );
    const { catalog } = session.tenant;
    const touch = <A extends unknown[], R>(fn: (...a: A) => R) => (...a: A): R => {
      session.touch();
      return fn(...a);
    };
    server.setRequestHandler(ListToolsRequestSchema, touch(async () => {
      await this.checkMethodLimit(session, "tools/list");
      return { tools: view.listTools() };
    }));
    server.setRequestHandler(CallToolRequestSchema, touch((req, extra) => this.callTool(session, req.params as Params, extra, view)));
    server.setRequestHandler(ListPromptsRequestSchema, touch(async () => {
      await this.checkMethodLimit(session, "prompts/list");
      return { prompts: catalog.prompts.filter((p) => view.allowsServer(catalog.prompt(p.name)!.child.name)) };
    }));
    server.setRequestHandler(GetPromptRequestSchema, touch(async (req, extra) => {
      await this.checkMethodLimit(session, "prompts/get");
      const owner = this.selectedPrompt(session, req.params.name, view);
      if (!owner) throw unknownName("prompt", req.params.name, catalog.suggestPrompts(req.params.name));
      return this.forward(owner.child, "prompts/get", { ...req.params, name: owner.original }, session, extra);
    }));
    server.setRequestHandler(ListResourcesRequestSchema, touch(async () => {
      await this.checkMethodLimit(session, "resources/list");
      return { resources: await this.listResources(session, view) };
    }));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, touch(async () => {
      await this.checkMethodLimit(session, "resources/templates/list");
      return { resourceTemplates: catalog.resourceTemplates().filter((t) => view.allowsServer(t.child.name)).map((t) => t.template) };
    }));
    server.setRequestHandler(ReadResourceRequestSchema, touch(async (req, extra) => {
      await this.checkMethodLimit(session, "resources/read");
      return this.forward(this.resourceOwner(session, req.params.uri, view), "resources/read", req.params as Params, session, extra);
    }));
    server.setRequestHandler(SubscribeRequestSchema, touch(async (req, extra) => {
      const owner = this.resourceOwner(session, req.params.uri, view);
      session.subscriptions.add(req.params.uri);
      if (owner.capabilities.resources?.subscribe) await this.forward(owner, "resources/subscribe", req.params as Params, session, extra);
      return {};
    }));
    server.setRequestHandler(UnsubscribeRequestSchema, touch(async (req, extra) => {
      session.subscriptions.delete(req.params.uri);
      const owner = session.tenant.resourceOwners.get(req.params.uri) ?? catalog.templateOwner(req.params.uri);
      if (owner?.capabilities.resources?.subscribe) await this.forward(owner, "resources/unsubscribe", req.params as Params, session, extra).catch(() => undefined);
      return {};
    }));
    server.setRequestHandler(CompleteRequestSchema, touch(async (req, extra) => {
      const ref = req.params.ref as { type: string; name?: string; uri?: string };
      if (ref.type === "ref/prompt") {
        const owner = this.selectedPrompt(session, ref.name ?? "", view);
        if (!owner) throw unknownName("prompt", ref.name ?? "", catalog.suggestPrompts(ref.name ?? ""));
        return this.forward(owner.child, "completion/complete", { ...req.params, ref: { ...ref, name: owner.original } }, session, extra);
      }
      const owner = catalog.templateOwner(ref.uri ?? "") ?? session.tenant.resourceOwners.get(ref.uri ?? "");
      if (!owner || !view.allowsServer(owner.name)) return { completion: { values: [], hasMore: false } };
      return this.forward(owner, "completion/complete", req.params as Params, session, extra);
    }));
    server.setRequestHandler(SetLevelRequestSchema, touch(async (req) => {
      session.logLevel = req.params.level;
      return {};
    }));
    server.oninitialized = () => {
      session.clientCapabilities = server.getClientCapabilities() ?? {};
    };
    session.servers.add(server);
    server.onclose = () => session.servers.delete(server);
    return server;
  }

  /** A prompt by published name, if the session's selection includes its server (hub/selection.ts). */
  private selectedPrompt(session: ClientSession, name: string, view: SessionView) {
    const owner = session.tenant.catalog.prompt(name);
    return owner && view.allowsServer(owner.child.name) ? owner : undefined;
  }

  private async checkMethodLimit(session: ClientSession, method: string): Promise<void> {
    const verdict = await this.deps.limits.checkMethod(session.budget, method);
    if (verdict.allowed) return;
    this.deps.metrics.rateLimited.inc({ kind: "method", name: method });
    const seconds = Math.ceil(verdict.retryAfterMs / 1000);
    throw protocolError(RATE_LIMITED_CODE, `Rate limit for ${method} reached (${verdict.rule}); retry in ${seconds} s.`, {
      retryAfterMs: verdict.retryAfterMs,
    });
  }

  private async callTool(session: ClientSession, params: Params, extra: Extra, view: SessionView): Promise<CallToolResult> {
    const name = String(params.name ?? "");
    const args = (params.arguments ?? {}) as Record<string, unknown>;
    // selection hook (hub/selection.ts): outside the session's selection, or hub_find_tools
    const refused = view.refuseCall(name) ?? view.callLocal(name, args, extra);
    if (refused) return refused;
    const local = this.deps.localTools?.call(name, args, session, extra);
    if (local) return local;
    const { catalog } = session.tenant;
    // a server not recorded in the manifest lists its tools only once it is up: wait for that
    // rather than call its tools unknown to a client that called right after initialize
    const owner = catalog.tool(name) ?? ((await firstStarts(session.tenant.children)) && catalog.tool(name));
    if (!owner) throw unknownName("tool", name, catalog.suggestTools(name));

    const { metrics } = this.deps;
    const verdict = await this.deps.limits.checkTool(session.budget, name);
    if (!verdict.allowed) {
      metrics.rateLimited.inc({ kind: "tool", name });
      metrics.toolCalls.inc({ tool: name, outcome: "rate_limited" });
      const seconds = Math.ceil(verdict.retryAfterMs / 1000);
      // no structuredContent: a client validates it against the tool's outputSchema, error or not
      return {
        content: [{ type: "text", text: `Rate limit for ${name} reached (${verdict.rule}); retry in ${seconds} s.` }],
        isError: true,
        _meta: { [RETRY_AFTER_META_KEY]: verdict.retryAfterMs },
      };
    }

    const started = performance.now();
    const call: InflightCall = { child: owner.child, tool: name, extra };
    session.inflight.add(call);
    try {
      const result = (await this.forward(owner.child, "tools/call", { ...params, name: owner.original }, session, extra)) as CallToolResult;
      metrics.toolCalls.inc({ tool: name, outcome: result.isError ? "tool_error" : "ok" });
      return result;
    } catch (err) {
      if (extra.signal.aborted) throw err;
      metrics.toolCalls.inc({ tool: name, outcome: "error" });
      const message = this.toolFailureMessage(err, owner.child, name);
      if (message === undefined) throw err;
      return { content: [{ type: "text", text: message }], isError: true };
    } finally {
      session.inflight.delete(call);
      session.touch();
      metrics.toolLatency.observe({ tool: name }, (performance.now() - started) / 1000);
    }
  }

  /** A model-actionable message for a failed call, or undefined to pass a protocol error through. */
  private toolFailureMessage(err: unknown, child: Child, tool: string): string | undefined {
    if (err instanceof ChildUnavailableError || err instanceof MessageTooLargeError) return err.message;
    if (err instanceof QueueFullError) return `The '${child.name}' server is busy (${err.message}); retry ${tool} shortly.`;
    if (err instanceof McpError) {
      if (err.code === ErrorCode.ConnectionClosed) {
        return `The '${child.name}' server exited while running ${tool}; it is being restarted and anything it held may be lost. Retry the call.`;
      }
      if (err.code === ErrorCode.RequestTimeout) return `${tool} timed out: ${err.message}. The call was cancelled.`;
      return undefined;
    }
    this.deps.log.warn("tool call failed", { tool, error: errorMessage(err) });
    return `${tool} failed: ${errorMessage(err)}`;
  }

  /** Send a request to a child on behalf of a session, with progress and cancellation carried across. */
  private async forward(child: Child, method: string, params: Params, session: ClientSession, extra: Extra) {
    const { progressToken, ...meta } = params._meta ?? {};
    const forwarded: Params = { ...params, _meta: { ...meta, [SESSION_META_KEY]: session.id, ...(child.local ? { [TOKEN_META_KEY]: session.token } : {}) } };
    // progress is relayed in order, and all of it before the result, or the client loses the tail
    let relayed: Promise<unknown> = Promise.resolve();
    const onprogress =
      progressToken === undefined
        ? undefined
        : (p: { progress: number; total?: number; message?: string }) => {
            const notification = { method: "notifications/progress" as const, params: { ...p, progressToken: progressToken as string | number } };
            relayed = relayed.then(() => extra.sendNotification(notification)).catch(() => undefined);
          };
    try {
      const result = await child.request(method, forwarded, { signal: extra.signal, onprogress });
      await relayed;
      return result;
    } catch (err) {
      if (method !== "tools/call" && err instanceof ChildUnavailableError) throw protocolError(ErrorCode.InternalError, err.message);
      if (method !== "tools/call" && err instanceof MessageTooLargeError) throw protocolError(ErrorCode.InvalidParams, err.message);
      // the child's message already carries the SDK's "MCP error N:" prefix; a client adds its own
      if (err instanceof McpError) throw protocolError(err.code, withoutCodePrefix(err.message), err.data);
      throw err;
    }
  }

  private async listResources(session: ClientSession, view: SessionView): Promise<Resource[]> {
    const { resourceOwners } = session.tenant;
    const lists = await Promise.all(
      session.tenant.children
        .filter((c) => LISTED_STATES.has(c.state) && c.capabilities.resources && view.allowsServer(c.name))
        .map(async (child) => {
          const resources: Resource[] = [];
          let cursor: string | undefined;
          try {
            do {
              const page = (await child.request("resources/list", {
                ...(cursor ? { cursor } : {}),
                _meta: { [SESSION_META_KEY]: session.id },
              })) as { resources: Resource[]; nextCursor?: string };
              resources.push(...page.resources);
              cursor = page.nextCursor;
            } while (cursor && resources.length < MAX_RESOURCES_PER_CHILD);
          } catch (err) {
            this.deps.log.warn("resources/list failed", { server: child.name, error: errorMessage(err) });
          }
          for (const r of resources) if (!resourceOwners.has(r.uri)) resourceOwners.set(r.uri, child);
          return resources;
        }),
    );
    return lists.flat();
  }

  private resourceOwner(session: ClientSession, uri: string, view: SessionView): Child {
    const owner = session.tenant.resourceOwners.get(uri) ?? session.tenant.catalog.templateOwner(uri);
    if (owner && view.allowsServer(owner.name)) return owner;
    const withResources = session.tenant.children.filter((c) => LISTED_STATES.has(c.state) && c.capabilities.resources && view.allowsServer(c.name));
    if (!owner && withResources.length === 1) return withResources[0];
    throw protocolError(-32002, `Resource not found: ${uri}. List resources (resources/list) or templates to see what can be read.`, { uri });
  }
}

const FIRST_START_WAIT_MS = 30_000;

/** Waits (bounded) for children still starting for the first time; true when there were any. */
async function firstStarts(children: Child[]): Promise<boolean> {
  const starting = children.filter((c) => c.state === "starting").map((c) => c.started);
  if (starting.length === 0) return false;
  await Promise.race([Promise.allSettled(starting), new Promise((r) => setTimeout(r, FIRST_START_WAIT_MS).unref())]);
  return true;
}

function unknownName(kind: string, name: string, suggestions: string[]): McpError {
  const hint = suggestions.length ? ` Did you mean: ${suggestions.join(", ")}?` : ` List them with ${kind}s/list.`;
  return protocolError(ErrorCode.InvalidParams, `Unknown ${kind} '${name}'.${hint}`);
}

// A tools/call, whichever way it arrived (an SDK server's handler, or a direct reply): the
// session's selection, the hub's own tools, the owning child, its rate limit, metrics, and a
// message the model can act on when the child could not run it. The result is the child's, as
// it sent it: the child validated it against its own schema, so the hub neither checks nor rebuilds it.
import { ErrorCode, McpError, type CallToolResult, type Tool as ListedTool } from "@modelcontextprotocol/sdk/types.js";
import { RETRY_AFTER_META_KEY } from "../../servers/lib/session-events.js";
import { errorMessage, type Logger } from "../../servers/lib/log.js";
import { ChildUnavailableError, MessageTooLargeError, type Child } from "../children/child.js";
import { forward, type Params } from "./forward.js";
import { protocolError } from "../protocol/jsonrpc.js";
import type { LimitVerdict, RateLimits } from "./rate-limits.js";
import type { HubMetrics } from "../observability/metrics.js";
import { traceRequest } from "../observability/tracing.js";
import { QueueFullError } from "../children/queue.js";
import { QueueBudgetError } from "../children/queue-budget.js";
import { HUB, type SessionView } from "../catalog/selection.js";
import { NAME_WAIT_MS } from "../catalog/starting.js";
import { CONTEXT_ARGUMENT } from "../catalog/context-argument.js";
import { inflightCall, type CallChannel, type ClientSession } from "./registry.js";
import { HUB_CONTEXT_TOOLS, namesContext, type ContextCall, type Contexts } from "./contexts.js";
import type { CallNote, CallRecords } from "./call-records.js";

/** A call of one of the hub's own tools: who calls, and the call's way back to its client. */
export interface HubToolCall {
  session: ClientSession;
  channel: CallChannel;
  log: Logger;
}

/** Tools the hub serves itself (hub_*, hub/tools/hub-tools.ts), checked before the children's. */
export interface HubTools {
  list(): ListedTool[];
  /** undefined when the hub has no such tool. */
  call(name: string, args: unknown, call: HubToolCall): Promise<CallToolResult> | undefined;
}

export interface ToolCallDeps {
  limits: RateLimits;
  metrics: HubMetrics;
  log: Logger;
  hubTools?: HubTools;
  /** Contexts named by handle (./contexts.ts); without them a `context` argument goes to the tool as it came. */
  contexts?: Contexts;
  /** The audit trail and each session's recent calls (./call-records.ts). */
  records?: CallRecords;
}

export class ToolCalls {
  constructor(private readonly deps: ToolCallDeps) {}

  /** The call, traced (OpenTelemetry: a no-op unless OTEL_* asks for traces), and recorded once it ends (./call-records.ts), however it ends. */
  call(caller: ClientSession, view: SessionView, given: Params, channel: CallChannel): Promise<CallToolResult> {
    return traceRequest(caller, "tools/call", given, channel.requestId, () => this.recorded(caller, view, given, channel));
  }

  private async recorded(caller: ClientSession, view: SessionView, given: Params, channel: CallChannel): Promise<CallToolResult> {
    const { records } = this.deps;
    if (!records) return this.run(caller, view, given, channel, {});
    const note: CallNote = {};
    const [started, startedAt] = [performance.now(), Date.now()];
    try {
      const result = await this.run(caller, view, given, channel, note);
      records.called(caller, given, channel, note, started, startedAt, { result });
      return result;
    } catch (error) {
      records.called(caller, given, channel, note, started, startedAt, { error });
      throw error;
    }
  }

  private async run(caller: ClientSession, view: SessionView, given: Params, channel: CallChannel, note: CallNote): Promise<CallToolResult> {
    const name = String(given.name ?? "");
    const { log, hubTools } = this.deps;
    // selection hook (hub/catalog/selection.ts): outside the session's selection
    const refused = view.refuseCall(name);
    if (refused) {
      note.refused = "not_selected";
      return refused;
    }
    const hubTool = view.serverOf(name) === HUB;
    // a `context` argument runs the call as another context of the caller's tenant (./contexts.ts); a call without one takes no extra turn
    const resolved = this.deps.contexts && namesContext(given) ? await this.inContext(this.deps.contexts, caller, given, name, hubTool) : undefined;
    if (resolved && "refused" in resolved) {
      note.refused = "context";
      return resolved.refused;
    }
    const { session, params } = resolved ?? { session: caller, params: given };
    note.session = session;
    const args = (params.arguments ?? {}) as Record<string, unknown>;
    if (hubTool) {
      note.server = HUB;
      // the hub's own tools are rate-limited like any other: hub_metrics reads the whole process table
      const pending = this.rateLimited(session, name, note);
      const limited = pending instanceof Promise ? await pending : pending;
      if (limited) return limited;
      return (
        view.callFindTools(name, args, { notify: (n) => channel.notify(n), log, sessionless: session.kind === "implicit" || session.kind === "modern" }) ??
        hubTools?.call(name, args, { session, channel, log }) ??
        Promise.reject(unknownName("tool", name, []))
      );
    }
    const { catalog } = session.tenant;
    // a server not recorded in the manifest lists its tools only once it is up: wait for that
    // rather than call its tools unknown to a client that called right after initialize
    const owner = catalog.tool(name) ?? ((await firstStarts(session.tenant.children)) && catalog.tool(name));
    if (!owner) {
      note.refused = "unknown_tool";
      throw unknownName("tool", name, catalog.suggestTools(name));
    }
    note.server = owner.child.name;

    const { metrics } = this.deps;
    const pending = this.rateLimited(session, name, note);
    const limited = pending instanceof Promise ? await pending : pending;
    if (limited) return limited;

    const started = performance.now();
    const call = inflightCall(owner.child, name, channel, session === caller ? undefined : caller);
    session.inflight.add(call);
    try {
      const result = (await forward(owner.child, "tools/call", params, session, channel, { name: owner.original }, call)) as CallToolResult;
      metrics.countCall(session.tenant.name, name, result.isError ? "tool_error" : "ok");
      return result;
    } catch (err) {
      if (channel.signal.aborted) throw err;
      note.failure = err;
      metrics.countCall(session.tenant.name, name, "error");
      const message = this.failureMessage(err, owner.child, name);
      if (message === undefined) throw err;
      return { content: [{ type: "text", text: message }], isError: true };
    } finally {
      session.inflight.delete(call);
      session.touch();
      metrics.toolLatency.observe({ tool: name }, (performance.now() - started) / 1000);
    }
  }

  /** The call in the context its arguments name; whether a child's tool takes one is known once its server is listed, as for any call. */
  private async inContext(
    contexts: Contexts,
    caller: ClientSession,
    given: Params,
    name: string,
    hubTool: boolean,
  ): Promise<ContextCall | { refused: CallToolResult }> {
    const { catalog, children } = caller.tenant;
    const owner = hubTool ? undefined : (catalog.tool(name) ?? ((await firstStarts(children)) ? catalog.tool(name) : undefined));
    // an unknown tool is refused as unknown further on; a tool with a `context` argument of its own gets it as it came
    if (!hubTool && (!owner || (!owner.takesContext && owner.listed?.inputSchema.properties?.[CONTEXT_ARGUMENT] !== undefined))) {
      return { session: caller, params: given };
    }
    return contexts.resolve(caller, given, name, hubTool ? HUB_CONTEXT_TOOLS.has(name) : owner?.takesContext === true);
  }

  /**
   * The refusal when the session's budget for this tool is spent, noted and counted; undefined when the call may go on.
   * Settled at once for a tool no rule limits: the hot path takes no extra turn of the event loop.
   */
  private rateLimited(session: ClientSession, name: string, note: CallNote): CallToolResult | undefined | Promise<CallToolResult | undefined> {
    const checked = this.deps.limits.checkTool(session.budget, name);
    const settle = (verdict: LimitVerdict) => this.refusal(verdict, session, name, note);
    return checked instanceof Promise ? checked.then(settle) : settle(checked);
  }

  private refusal(verdict: LimitVerdict, session: ClientSession, name: string, note: CallNote): CallToolResult | undefined {
    if (verdict.allowed) return undefined;
    note.refused = "rate_limited";
    this.deps.metrics.rateLimited.inc({ kind: "tool", name });
    // the per-tool call counter counts the children's tools, as the rest of run() does
    if (note.server !== HUB) this.deps.metrics.countCall(session.tenant.name, name, "rate_limited");
    const seconds = Math.ceil(verdict.retryAfterMs / 1000);
    // no structuredContent: the tool never ran, and a client checks any against the tool's outputSchema, error or not
    return {
      content: [{ type: "text", text: `Rate limit for ${name} reached (${verdict.rule}); retry in ${seconds} s.` }],
      isError: true,
      _meta: { [RETRY_AFTER_META_KEY]: verdict.retryAfterMs },
    };
  }

  /** A model-actionable message for a failed call, or undefined to pass a protocol error through. */
  private failureMessage(err: unknown, child: Child, tool: string): string | undefined {
    if (err instanceof ChildUnavailableError || err instanceof MessageTooLargeError || err instanceof QueueBudgetError) return err.message;
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
}

/** Waits (bounded) for children still starting for the first time; true when there were any. */
export async function firstStarts(children: Child[]): Promise<boolean> {
  const starting = children.filter((c) => c.state === "starting").map((c) => c.started);
  if (starting.length === 0) return false;
  await Promise.race([Promise.allSettled(starting), new Promise((r) => setTimeout(r, NAME_WAIT_MS).unref())]);
  return true;
}

export function unknownName(kind: string, name: string, suggestions: string[]): McpError {
  const hint = suggestions.length ? ` Did you mean: ${suggestions.join(", ")}?` : ` List them with ${kind}s/list.`;
  return protocolError(ErrorCode.InvalidParams, `Unknown ${kind} '${name}'.${hint}`);
}

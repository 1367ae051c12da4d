// A child configured `"protocol": "2026-07-28"` (or "auto"): reached over Streamable HTTP, or over
// the pipe to its process (./transport.ts), with the SDK v2 client, which speaks that revision (server/discover, the per-request envelope,
// subscriptions/listen) where the 2025 Client can only send initialize. Such a child asks its
// questions (sampling, elicitation, roots) by answering a call with input_required; the hub drives
// those rounds itself rather than letting the client fulfil them, because each question must reach
// the client whose call it is: it goes out named like a 2025 child's request naming that call
// (hub/sessions/child-requests.ts), and the child's requestState stays here, with the call, until
// the retry carries the answers back. The caller never sees the child's state, only its own round.
import { setTimeout as delay } from "node:timers/promises";
import {
  CLIENT_CAPABILITIES_META_KEY,
  Client,
  isInputRequiredResult,
  LOG_LEVEL_META_KEY,
  StreamableHTTPClientTransport,
  type InputRequest,
  type Transport,
} from "@modelcontextprotocol/client";
import type { Prompt, Request, ResourceTemplate, Result, ServerCapabilities, Tool } from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { CALL_META_KEY, INPUT_KEY_META_KEY, SESSION_META_KEY } from "../../servers/lib/session-events.js";
import { isPlainObject } from "../protocol/jsonrpc.js";
import { elicitAnswer, relayedMethod, rootsAnswer, samplingAnswer, toolFromV2 } from "../protocol/sdk-seam.js";
import type { ServerConfig } from "../config/config.js";
import type { CallOptions } from "./calls.js";
import { hearListChanges, takeBareResults } from "./modern-leniency.js";
import { wireUnasked, type UnaskedEvents } from "./modern-unasked.js";

/** What the hub does with what a 2026 child says unasked or asks. */
export interface ModernLinkEvents extends UnaskedEvents {
  /** A question for the client whose call (named in its _meta) asked it: routed like a 2025 child's request. */
  ask(request: Request, signal: AbortSignal): Promise<Result>;
  listChanged(what: "tools" | "prompts" | "resources"): void;
  /** Something the child listed that the hub lists otherwise than it came (hub/protocol/sdk-seam.ts says what and why). */
  warn(message: string, fields: Record<string, unknown>): void;
}

export interface ModernLimits {
  timeoutMs: number;
  maxTotalMs: number;
}

/** Rounds of questions one call may take before the hub gives up on it (the SDK client's own default cap). */
const MAX_ROUNDS = 10;
/** How long a retry that answers nothing (the server returned only a requestState) waits. */
const STATE_ONLY_PACING_MS = 250;
/** The requests the revision lets a server answer with input_required. */
const MULTI_ROUND = new Set(["tools/call", "prompts/get", "resources/read"]);

/** The reserved envelope prefix: what a 2026 caller's request carries about that caller. */
const ENVELOPE_PREFIX = "io.modelcontextprotocol/";

/**
 * `params` without a 2026 caller's envelope: the child's client is the hub, which says who it is. What
 * the caller can be asked stays, on a 2026 connection, so the child asks only what the caller can answer
 * (hub/sessions/forward.ts puts a 2025 caller's there too); a request of the hub's own declares the hub's.
 */
function withoutEnvelope(params: Record<string, unknown> | undefined, keepCapabilities: boolean): Record<string, unknown> | undefined {
  const meta = params?._meta as Record<string, unknown> | undefined;
  if (!meta) return params;
  // and the level of log lines wanted, which the hub chose for the caller (hub/sessions/forward.ts): the child sends none without it
  const kept = ([key]: [string, unknown]) =>
    !key.startsWith(ENVELOPE_PREFIX) || (keepCapabilities && key === CLIENT_CAPABILITIES_META_KEY) || key === LOG_LEVEL_META_KEY;
  return { ...params, _meta: Object.fromEntries(Object.entries(meta).filter(kept)) };
}

export class ModernLink {
  /** Whether the child was said to send results without resultType (once per child). */
  private bareResults = false;
  /** Log lines, resource updates and the child's end (./modern-unasked.ts). */
  private unasked?: ReturnType<typeof wireUnasked>;

  private constructor(
    private readonly client: Client,
    private readonly name: string,
    private readonly limits: ModernLimits,
    private readonly events: ModernLinkEvents,
  ) {}

  /** @param transport the pipe to a spawned child (./transport.ts); none: the child is reached at its url */
  static async connect(name: string, config: ServerConfig, limits: ModernLimits, events: ModernLinkEvents, transport?: Transport): Promise<ModernLink> {
    const client = new Client(
      { name: "agentbox-hub", version: "0.1.0" },
      {
        versionNegotiation: { mode: config.protocol === "auto" ? "auto" : { pin: "2026-07-28" } },
        capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } },
        // the hub answers input_required itself (below): the client must hand it back, not fulfil it
        inputRequired: { autoFulfill: false },
      },
    );
    const link = new ModernLink(client, name, limits, events);
    // "auto" may land on the 2025 era: there the child asks with requests of its own, routed by the _meta it names
    client.setRequestHandler("sampling/createMessage", async (request, ctx) => samplingAnswer(await events.ask(request, ctx.mcpReq.signal)));
    client.setRequestHandler("elicitation/create", async (request, ctx) => elicitAnswer(await events.ask(request, ctx.mcpReq.signal)));
    client.setRequestHandler("roots/list", async (request, ctx) => rootsAnswer(await events.ask(request, ctx.mcpReq.signal)));
    link.unasked = wireUnasked(client, name, limits.timeoutMs, events);
    const wire = transport ?? new StreamableHTTPClientTransport(new URL(config.url!), { requestInit: { headers: config.headers ?? {} } });
    takeBareResults(
      wire,
      () => client.getProtocolEra() === "modern",
      () => link.noticeBareResult(),
    );
    await client.connect(wire);
    hearListChanges(client, events);
    return link;
  }

  private noticeBareResult(): void {
    if (this.bareResults) return;
    this.bareResults = true;
    this.events.warn("the server sends results without resultType (2026-07-28 requires it); each is taken as complete", {});
  }

  /** Whether the child still answers (./transport.ts's watchdog asks a spawned one when calls wait on it). */
  async ping(options: { timeout: number }): Promise<void> {
    await this.client.ping(options);
  }

  get capabilities(): ServerCapabilities {
    return this.client.getServerCapabilities() ?? {};
  }

  get instructions(): string | undefined {
    return this.client.getInstructions();
  }

  /** What the child offers, every page of it (the client walks the pages, capped). */
  async listOffers(): Promise<{ tools: Tool[]; prompts: Prompt[]; resourceTemplates: ResourceTemplate[] }> {
    const caps = this.capabilities;
    // the hub keeps its own copy and refreshes it on list_changed: the client's cache would only serve it stale
    const fresh = { cacheMode: "refresh" } as const;
    const leftOut = (tool: string) => (why: string) => this.events.warn("part of a listed tool is left out", { tool, why });
    return {
      tools: caps.tools ? (await this.client.listTools(undefined, fresh)).tools.map((tool) => toolFromV2(tool, this.name, leftOut(tool.name))) : [],
      prompts: caps.prompts ? (await this.client.listPrompts(undefined, fresh)).prompts : [],
      resourceTemplates: caps.resources ? (await this.client.listResourceTemplates(undefined, fresh)).resourceTemplates : [],
    };
  }

  /**
   * Sends a request and returns the child's final result. Each input_required round's questions go,
   * all at once, to the client whose call this is (named by the session and call in `params._meta`,
   * which the hub put there: hub/sessions/forward.ts); their answers and the child's requestState go
   * back in the retry. A question nobody can be asked fails the whole call with the reason.
   */
  async request(method: string, params: Record<string, unknown> | undefined, options: CallOptions = {}): Promise<Result> {
    const aborter = new AbortController();
    const onAbort = () => aborter.abort(options.signal?.reason);
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const wire = {
      signal: aborter.signal,
      timeout: this.limits.timeoutMs,
      maxTotalTimeout: this.limits.maxTotalMs,
      resetTimeoutOnProgress: true,
      allowInputRequired: MULTI_ROUND.has(method),
      ...(options.onprogress ? { onprogress: options.onprogress } : {}),
    };
    try {
      const watched = this.unasked?.subscription(method, params);
      if (watched) return await watched;
      const relayed = relayedMethod(method);
      const own = withoutEnvelope(params, this.client.getProtocolEra() === "modern");
      let sent = own;
      for (let round = 0; ; round++) {
        const result = await this.client.request({ method: relayed, params: sent }, wire);
        if (!isInputRequiredResult(result)) return result;
        if (round >= MAX_ROUNDS) {
          throw new McpError(ErrorCode.InternalError, `The '${this.name}' server still asked for input after ${MAX_ROUNDS} rounds; the call was given up.`);
        }
        const questions = result.inputRequests ?? {};
        // a round with nothing to ask is the server shedding load: its retry waits a moment, as the SDK's own client does
        if (!Object.keys(questions).length) await delay(STATE_ONLY_PACING_MS, undefined, { signal: aborter.signal });
        const inputResponses = await this.answers(questions, params, aborter.signal);
        sent = {
          ...own,
          ...(Object.keys(inputResponses).length ? { inputResponses } : {}),
          ...(result.requestState !== undefined ? { requestState: result.requestState } : {}),
        };
      }
    } finally {
      options.signal?.removeEventListener("abort", onAbort);
    }
  }

  /** One round's questions, asked at once (so a 2026 caller gets them in one round of its own); the first to fail ends the round. */
  private async answers(
    inputRequests: Record<string, InputRequest>,
    call: Record<string, unknown> | undefined,
    signal: AbortSignal,
  ): Promise<Record<string, Result>> {
    const callMeta = isPlainObject(call?._meta) ? call._meta : {};
    const named = Object.fromEntries([SESSION_META_KEY, CALL_META_KEY].filter((k) => typeof callMeta[k] === "string").map((k) => [k, callMeta[k]]));
    const round = new AbortController();
    const onAbort = () => round.abort(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      const answered = await Promise.all(
        Object.entries(inputRequests).map(async ([key, question]) => {
          const { method, params } = question;
          // whatever call the child names is not its to name: the question belongs to the call it answered
          const { [SESSION_META_KEY]: _session, [CALL_META_KEY]: _call, ...ownMeta } = params?._meta ?? {};
          // the child's key is the caller's key too, where it is free (hub/sessions/pending-call.ts)
          const request = { method, params: { ...params, _meta: { ...ownMeta, ...named, [INPUT_KEY_META_KEY]: key } } };
          try {
            return [key, await this.events.ask(request, round.signal)] as const;
          } catch (err) {
            round.abort(err);
            throw err;
          }
        }),
      );
      return Object.fromEntries(answered);
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  /** A client session ended: its resource subscriptions end with it (./modern-watch.ts). */
  async sessionClosed(session: string): Promise<void> {
    await this.unasked?.sessionClosed(session);
  }

  async close(): Promise<void> {
    await this.unasked?.close();
    await this.client.close().catch(() => undefined);
  }
}

// A call that outlives the request that started it: a 2026-07-28 tools/call, prompts/get or
// resources/read whose child asks its client something (the revision has no server-to-client
// requests: the questions go out as input_required, hub/modern/, and the client's retry brings the
// answers), and a tool call run as a task (hub/tasks/, either era), which no request waits on at
// all. The call collects its child's questions until a round carries them, hands each answer to the
// question it answers, and keeps its outcome for whichever round asks next.
import type { Timer } from "../protocol/clock.js";
import { randomUUID } from "node:crypto";
import {
  CLIENT_CAPABILITIES_META_KEY,
  LOG_LEVEL_META_KEY,
  MissingRequiredClientCapabilityError,
  type InputRequest,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { ErrorCode, type LoggingLevel, type Result, type ServerNotification, type ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import type { Child } from "../children/child.js";
import { CallCancellation } from "../protocol/cancellation.js";
import { protocolError } from "../protocol/jsonrpc.js";
import { inputRequestFor, notificationForV2 } from "../protocol/sdk-seam.js";
import { CAPABILITY_FOR, LOG_LEVELS } from "./child-requests.js";
import type { Params } from "./forward.js";
import type { HandlerCtx } from "./handlers.js";
import type { CallChannel, ClientSession } from "./registry.js";

/** A child's input-key hint the hub takes as the key: a short plain name (anything else gets the hub's own key). */
const INPUT_KEY = /^(?!__proto__$)[A-Za-z0-9_.-]{1,64}$/;

/** The client's answer under `key`: an object it sent as its own property (never one inherited, as "__proto__" would be). */
function responseFor(responses: Record<string, unknown> | undefined, key: string): Result | undefined {
  const response = responses && Object.hasOwn(responses, key) ? responses[key] : undefined;
  return response !== null && typeof response === "object" ? (response as Result) : undefined;
}

interface Ask {
  request: InputRequest;
  resolve(result: Result): void;
  reject(error: Error): void;
}

/** What a call needs of the request carrying it (envelope, cancellation, notify, answers): a 2026 request's ServerContext, or a task's own round (hub/tasks/). */
export interface CallRound {
  // the JSON-RPC id when a client's request carries it (a task's round has none): its trace span names it
  mcpReq: Pick<ServerContext["mcpReq"], "envelope" | "signal" | "notify" | "inputResponses"> & Partial<Pick<ServerContext["mcpReq"], "id">>;
  /** Set on a task's own round (hub/tasks/store.ts): a call it opens is a task's from its start. */
  detached?: true;
}

/** The client capabilities a 2026 request declared in its envelope. */
export function declaredCapabilities(round: CallRound): Record<string, unknown> | undefined {
  return (round.mcpReq.envelope as Record<string, Record<string, unknown> | undefined> | undefined)?.[CLIENT_CAPABILITIES_META_KEY];
}

/** What a round ends with: the call's result, its child's questions, or (for a round given a deadline) neither yet: the call runs on. */
export type Round = { result: Result } | { inputRequests: Record<string, InputRequest> } | { running: true };

/** One request (tools/call, prompts/get, resources/read) in flight across its client's rounds. */
export class PendingCall {
  readonly id = randomUUID();
  /** The call's own cancellation: it outlives the HTTP request of each round. */
  readonly cancellation = new CallCancellation();
  private readonly unsent = new Map<string, Ask>();
  private readonly asked = new Map<string, Ask>();
  /** The children whose questions wait in `unsent` since the last round went out. */
  private readonly askers = new Set<Child>();
  private outcome?: { result: Result } | { error: unknown };
  private wake?: () => void;
  private asks = 0;
  /** How many times the call was kept for a retry: the state of each round names it, so only the latest state reaches the call. */
  sealedRound = 0;
  /** Answers the first round brought unasked, each used for the question of its key at most once. */
  private answered?: Record<string, unknown>;
  /** When it stops waiting for its client's retry (hub/modern/pending-calls.ts). */
  expiry?: Timer;
  /** What the call left for after its final reply (hub_end_session ends the context). */
  readonly afterReply: Array<() => void> = [];
  /** Set once a task holds the call (hub/tasks/store.ts): no client waits on its reply any more. */
  detached: boolean;
  /** The task holding it, once one does (the audit trail names it). */
  taskId?: string;

  constructor(
    readonly session: ClientSession,
    /** What the request names: its method and its tool, prompt or resource; a retry must name the same. */
    readonly target: string,
    /** The request of the round now carrying the call: its notifications and its client's capabilities. */
    public round: CallRound,
  ) {
    // known before the call starts: its server's queue gives a task only the tasks' share of its slots
    this.detached = round.detached === true;
  }

  start(run: () => Promise<Result>): void {
    run().then(
      (result) => this.settle({ result }),
      (error: unknown) => this.settle({ error }),
    );
  }

  given(responses: Record<string, unknown> | undefined): void {
    this.answered = responses ? { ...responses } : undefined;
  }

  /**
   * A child's request: held until a round carries it to the client, answered by the round after
   * (or at once by an answer the first round brought under its key). Its key is the child's hint
   * when that is a plain name no other open question of this call holds, else the hub's own.
   */
  ask(request: ServerRequest, signal: AbortSignal, inputKey?: string, asker?: Child): Promise<Result> {
    const needed = CAPABILITY_FOR[request.method];
    if (!needed) {
      const why = `the revision has no ${request.method} for a server to send`;
      return Promise.reject(protocolError(ErrorCode.InvalidRequest, `The 2026-07-28 client of this call cannot be asked ${request.method}: ${why}.`));
    }
    const asked = inputRequestFor(request);
    if (!asked)
      return Promise.reject(
        protocolError(ErrorCode.InvalidParams, `The ${request.method} request carries metadata that is not JSON, so no client can be asked it.`),
      );
    if (!declaredCapabilities(this.round)?.[needed]) {
      // the revision fails the whole call (-32021, HTTP 400) naming what the caller must declare to be asked
      const missing = new MissingRequiredClientCapabilityError(
        { requiredCapabilities: { [needed]: {} } },
        `The tool asked its caller ${request.method}, which needs the ${needed} client capability; this request did not declare it ` +
          `(in _meta["${CLIENT_CAPABILITIES_META_KEY}"]). Declare it and call again.`,
      );
      this.settle({ error: missing });
      this.cancellation.abort(missing.message);
      return Promise.reject(missing);
    }
    const key = this.keyFor(needed, inputKey);
    const given = responseFor(this.answered, key);
    if (given) {
      delete this.answered?.[key];
      return Promise.resolve(given);
    }
    return new Promise<Result>((resolve, reject) => {
      this.unsent.set(key, { request: asked, resolve, reject });
      if (asker) this.askers.add(asker);
      signal.addEventListener("abort", () => {
        this.unsent.delete(key);
        this.asked.delete(key);
        reject(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
      });
      this.wake?.();
    });
  }

  /** A retry's answers go to the requests they answer; one left unanswered is asked again. */
  answer(responses: Record<string, unknown> | undefined): void {
    for (const [key, ask] of this.asked) {
      const response = responseFor(responses, key);
      if (response) ask.resolve(response);
      else this.unsent.set(key, ask);
    }
    this.asked.clear();
  }

  private keyFor(capability: string, hint: string | undefined): string {
    const taken = (key: string) => this.unsent.has(key) || this.asked.has(key);
    if (hint !== undefined && INPUT_KEY.test(hint) && !taken(hint)) return hint;
    let key: string;
    do key = `${capability}-${++this.asks}`;
    while (taken(key));
    return key;
  }

  /** Waits for what the client must hear next: the call's result, its child's questions, or (`deadline` first) that it runs on. */
  async next(round: CallRound, deadline?: Promise<void>): Promise<Round> {
    this.round = round;
    // already ended: nothing for the round's signal to cancel
    const ended = this.ended();
    if (ended) return ended;
    const cancel = () => this.cancellation.abort("the client cancelled the call");
    round.mcpReq.signal.addEventListener("abort", cancel);
    let caughtUp = false;
    let due = false;
    void deadline?.then(() => {
      due = true;
      this.wake?.();
    });
    try {
      for (;;) {
        const outcome = this.ended();
        if (outcome) return outcome;
        if (this.unsent.size && this.askers.size && !caughtUp) {
          // questions a child asks in one go (Promise.all) arrive one by one, in as many reads of its output as they
          // took: once it has caught up with a ping sent now, all of them are here, and this round carries them together
          const askers = [...this.askers];
          this.askers.clear();
          await Promise.all(askers.map((child) => child.caughtUp()));
          caughtUp = true;
          continue;
        }
        if (this.unsent.size) {
          const inputRequests = Object.fromEntries([...this.unsent].map(([key, ask]) => [key, ask.request]));
          for (const [key, ask] of this.unsent) this.asked.set(key, ask);
          this.unsent.clear();
          this.askers.clear();
          return { inputRequests };
        }
        if (due) return { running: true };
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      this.wake = undefined;
      round.mcpReq.signal.removeEventListener("abort", cancel);
    }
  }

  /** The call's result once it has one (its error thrown), else undefined. */
  private ended(): { result: Result } | undefined {
    if (!this.outcome) return undefined;
    if ("error" in this.outcome) throw this.outcome.error;
    return this.outcome;
  }

  /** Ends a call nobody came back for: its child's questions fail, the call is cancelled. */
  abandon(reason: string): void {
    for (const ask of [...this.unsent.values(), ...this.asked.values()]) ask.reject(protocolError(ErrorCode.RequestTimeout, reason));
    this.cancellation.abort(reason);
  }

  private settle(outcome: NonNullable<PendingCall["outcome"]>): void {
    // the first outcome stands: a call failed for a missing capability stays failed whatever its child answers after
    this.outcome ??= outcome;
    this.wake?.();
  }
}

/** The log level a 2026 request's envelope names, if it names one. */
export function envelopeLogLevel(ctx: CallRound): LoggingLevel | undefined {
  const level = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[LOG_LEVEL_META_KEY];
  return LOG_LEVELS.includes(level as LoggingLevel) ? (level as LoggingLevel) : undefined;
}

/** Whether a child's log line reaches a 2026 client: only when its request named a level, and at or above it. */
export function wantsLog(ctx: CallRound, notification: ServerNotification): boolean {
  if (notification.method !== "notifications/message") return true;
  const threshold = envelopeLogLevel(ctx);
  return threshold !== undefined && LOG_LEVELS.indexOf(notification.params.level) >= LOG_LEVELS.indexOf(threshold);
}

/**
 * A call's way back across its rounds: each round's request carries its notifications, its child's
 * questions become input_required (`onQuestion` hears each). Built in one literal: spreading it into
 * another to add the request's id took more of a 2026 call's CPU than the pending call itself.
 */
function callChannel(call: PendingCall, requestId: CallChannel["requestId"], requestBase: CallChannel["requestBase"], onQuestion?: () => void): CallChannel {
  return {
    signal: call.cancellation,
    requestId,
    requestBase,
    notify: async (notification) => {
      // between rounds no request carries the call: what it says then is lost, as on a closed stream
      const carried = notificationForV2(notification);
      if (carried && wantsLog(call.round, notification)) await call.round.mcpReq.notify(carried).catch(() => undefined);
    },
    logLevel: () => envelopeLogLevel(call.round),
    request: onQuestion
      ? (request, signal, inputKey, asker) => (onQuestion(), call.ask(request, signal, inputKey, asker))
      : (request, signal, inputKey, asker) => call.ask(request, signal, inputKey, asker),
    afterReply: (action) => call.afterReply.push(action),
    detached: () => call.detached,
    taskId: () => call.taskId,
  };
}

/**
 * A new request that may ask its client, started: its first round may bring its answers already (the
 * revision's stateless retry), and its child sees what the caller declared, so it can ask only what
 * the caller can answer. `target` is its method and name (what its sealed state is bound to);
 * `onQuestion` hears each question the child asks; `running` settles with the child's answer (the
 * call's outcome is settled by then).
 */
export function startRequest<P extends Params>(
  ctx: HandlerCtx,
  target: string,
  params: P,
  round: CallRound,
  run: (params: P, channel: CallChannel) => Promise<Result>,
  onQuestion?: () => void,
): { call: PendingCall; running: Promise<Result> } {
  const call = new PendingCall(ctx.session, target, round);
  call.given(round.mcpReq.inputResponses);
  const channel = callChannel(call, round.mcpReq.id, ctx.requestBase, onQuestion);
  const declared = declaredCapabilities(round);
  const forwarded = declared ? { ...params, _meta: { ...params._meta, [CLIENT_CAPABILITIES_META_KEY]: declared } } : params;
  const running = run(forwarded, channel);
  call.start(() => running);
  return { call, running };
}

export const TOOLS_CALL = "tools/call";

/** A new tools/call, started (hub/modern/direct.ts answers a plain one without an SDK server; hub/tasks/ runs one as a task). */
export function startCall(ctx: HandlerCtx, params: Params, round: CallRound, onQuestion?: () => void): { call: PendingCall; running: Promise<unknown> } {
  const run = (p: Params, channel: CallChannel) => ctx.hub.toolCalls.call(ctx.session, ctx.view, p, channel);
  return startRequest(ctx, `${TOOLS_CALL} ${String(params.name ?? "")}`, params, round, run, onQuestion);
}

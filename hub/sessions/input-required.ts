// A child's question (sampling, elicitation, roots) during a 2026-07-28 tools/call, prompts/get or
// resources/read (the requests that revision lets a server answer with input_required). It has no
// server-to-client requests: the hub answers the request with input_required carrying the child's
// questions, keeps the request running, and the client's retry brings the answers, which go to the
// child's waiting requests; then the hub waits for the result or the next questions. The retry
// names the request by a requestState the hub seals (HMAC, via the SDK's codec), bound to the
// tenant and the method: another tenant's client, another method, a forged or an expired state reaches nothing.
import { randomBytes, randomUUID } from "node:crypto";
import {
  CLIENT_CAPABILITIES_META_KEY,
  createRequestStateCodec,
  MissingRequiredClientCapabilityError,
  type InputRequest,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { ErrorCode, McpError, type Result, type ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import type { Child } from "../children/child.js";
import { CallCancellation } from "../protocol/cancellation.js";
import { protocolError } from "../protocol/jsonrpc.js";
import { CAPABILITY_FOR } from "./child-requests.js";
import type { ClientSession } from "./registry.js";
import type { MintedSecrets } from "../observability/minted-secrets.js";

/** How long a call waits for its client's retry; the sealed state expires with it. */
const ANSWER_WAIT_SECONDS = 600;
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
  expiry?: NodeJS.Timeout;
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
      return Promise.reject(new McpError(ErrorCode.InvalidRequest, `The 2026-07-28 client of this call cannot be asked ${request.method}: ${why}.`));
    }
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
      const params = { ...(request.params as Record<string, unknown>) };
      // the 2026 URL-mode shape has no elicitationId: the state carries the correlation
      delete params.elicitationId;
      this.unsent.set(key, { request: { method: request.method, params } as InputRequest, resolve, reject });
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
        if (this.outcome) {
          if ("error" in this.outcome) throw this.outcome.error;
          return this.outcome;
        }
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

  /** Ends a call nobody came back for: its child's questions fail, the call is cancelled. */
  abandon(reason: string): void {
    for (const ask of [...this.unsent.values(), ...this.asked.values()]) ask.reject(new McpError(ErrorCode.RequestTimeout, reason));
    this.cancellation.abort(reason);
  }

  private settle(outcome: NonNullable<PendingCall["outcome"]>): void {
    // the first outcome stands: a call failed for a missing capability stays failed whatever its child answers after
    this.outcome ??= outcome;
    this.wake?.();
  }
}

/** What a requestState names: a waiting call, and the round of it the state was sealed for. */
export interface SealedState {
  call: string;
  round: number;
  /** Set instead for a state another hub process sealed: why no call here can take it, and what to do. */
  heldElsewhere?: string;
}

/**
 * The sealed state behind the name of the process that holds its call (`<replica>:<process>:`), so
 * a retry that reaches another replica (the router's pool changed) or a restarted one is told so
 * in words, where the seal alone could only say "invalid". The name is the client's to forge: it
 * only chooses which refusal the client reads.
 */
const HOLDER = /^([a-z0-9-]{0,63}):([0-9a-f]{16}):(.+)$/s;
const START_AGAIN = "Send the request again without inputResponses and requestState.";
/** The requests a server may answer with input_required (hub/sessions/modern-server.ts): a retry of any of them names a waiting request. */
const RETRIED_METHODS = new Set(["tools/call", "prompts/get", "resources/read"]);

/** The hub's 2026 calls waiting for their clients' answers, and the seal on the state that names them. */
export class PendingCalls {
  private readonly calls = new Map<string, PendingCall>();
  private readonly process = randomBytes(8).toString("hex");

  /**
   * @param replica AGENTBOX_REPLICA: which replica a state names as its call's holder.
   * @param secrets where a state's seal is known until its call takes or drops it, so nothing the hub writes down shows it
   */
  constructor(
    private readonly secrets: MintedSecrets,
    private readonly replica?: string,
  ) {}

  // a key per hub process: the calls the states name live in this process only
  private readonly codec = createRequestStateCodec<SealedState>({
    key: randomBytes(32),
    ttlSeconds: ANSWER_WAIT_SECONDS,
    // the tenant is the hub's own finding (hub/http/endpoints/modern.ts), not the client's word
    bind: (ctx) => `${ctx.mcpReq.method}\0${ctx.http?.authInfo?.clientId ?? ""}`,
  });

  /** Seals the state a call's next round names it by. */
  async seal(call: PendingCall, round: ServerContext): Promise<string> {
    const sealed = await this.codec.mint({ call: call.id, round: call.sealedRound }, round);
    this.secrets.remember(call, sealed.slice(sealed.lastIndexOf(".") + 1));
    return `${this.replica ?? ""}:${this.process}:${sealed}`;
  }

  /**
   * The SDK's requestState hook: a state this hub did not seal for this tenant and method, or an
   * expired one, is refused before any handler runs (the SDK answers -32602 "Invalid or expired
   * requestState", its fixed wording, so nothing of the state is echoed).
   */
  readonly verify = async (state: string, round: ServerContext): Promise<SealedState> => {
    const [, replica, process, sealed] = HOLDER.exec(state) ?? [];
    if (sealed === undefined) throw new Error("malformed");
    if (replica === (this.replica ?? "") && process === this.process) return this.codec.verify(sealed, round);
    // only those requests are retries of a waiting one: for any other method the state is the SDK's to refuse
    if (!RETRIED_METHODS.has(round.mcpReq.method)) throw new Error("sealed by another hub process");
    return { call: "", round: -1, heldElsewhere: this.heldElsewhere(replica) };
  };

  private heldElsewhere(replica: string): string {
    const here = this.replica ? `replica '${this.replica}'` : "this agentbox";
    if (replica !== (this.replica ?? ""))
      return (
        `This request was held by ${replica ? `replica '${replica}'` : "another agentbox"}, but its retry reached ${here}: a call waiting for input lives only in the replica ` +
        `that started it (the router moved this client, because that replica is gone or draining or the replicas changed), so this answer ` +
        `cannot reach it, and the request there is lost to you. ${START_AGAIN}`
      );
    return `This request was held by ${here} before it restarted, and was lost with the restart. ${START_AGAIN}`;
  }

  open(session: ClientSession, target: string, round: CallRound): PendingCall {
    return new PendingCall(session, target, round);
  }

  /** Keeps a call for its client's retry, for as long as its state is valid. */
  keep(call: PendingCall): void {
    call.sealedRound += 1;
    this.calls.set(call.id, call);
    clearTimeout(call.expiry);
    call.expiry = setTimeout(() => {
      this.calls.delete(call.id);
      this.secrets.forget(call);
      call.abandon(`No answer came within ${ANSWER_WAIT_SECONDS} s; the call was cancelled.`);
    }, ANSWER_WAIT_SECONDS * 1000);
    call.expiry.unref();
  }

  /** The call a verified state names, taken for this round; a finished, another session's or another target's call is no call. */
  resume(state: SealedState, session: ClientSession, target: string): PendingCall {
    if (state.heldElsewhere) throw protocolError(ErrorCode.InvalidParams, state.heldElsewhere);
    const call = this.calls.get(state.call);
    // an earlier round's state was answered already: replaying it would answer the latest questions with old answers
    if (!call || call.session !== session || call.target !== target || call.sealedRound !== state.round) {
      throw protocolError(
        ErrorCode.InvalidParams,
        "Invalid requestState: it names no call waiting for an answer here (the call finished, was cancelled or expired, belongs to another " +
          "tool, prompt or resource, or the state is an earlier round's: send the latest one). " +
          "Send the request again without inputResponses and requestState.",
      );
    }
    this.calls.delete(call.id);
    clearTimeout(call.expiry);
    this.secrets.forget(call);
    return call;
  }
}

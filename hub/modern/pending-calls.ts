// The 2026-07-28 calls waiting for their clients' answers (input_required): the hub answers the
// request with input_required carrying the child's questions, keeps the call (../sessions/pending-call.ts)
// here, and the client's retry names it by a requestState the hub seals (HMAC, via the SDK's codec),
// bound to the tenant and the method: another tenant's client, another method, a forged or an
// expired state reaches nothing.
import { randomBytes } from "node:crypto";
import { createRequestStateCodec, type ServerContext } from "@modelcontextprotocol/server";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { protocolError } from "../protocol/jsonrpc.js";
import type { PendingCall } from "../sessions/pending-call.js";
import type { ClientSession } from "../sessions/registry.js";
import type { MintedSecrets } from "../observability/minted-secrets.js";
import type { Clock } from "../protocol/clock.js";

/** How long a call waits for its client's retry; the sealed state expires with it (the SDK's codec reads Date.now for that). */
export const ANSWER_WAIT_SECONDS = 600;

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
/** The requests a server may answer with input_required (hub/modern/server.ts): a retry of any of them names a waiting request. */
const RETRIED_METHODS = new Set(["tools/call", "prompts/get", "resources/read"]);

/** The hub's 2026 calls waiting for their clients' answers, and the seal on the state that names them. */
export class PendingCalls {
  private readonly calls = new Map<string, PendingCall>();
  private readonly process = randomBytes(8).toString("hex");

  /**
   * @param replica AGENTBOX_REPLICA: which replica a state names as its call's holder.
   * @param secrets where a state's seal is known until its call takes or drops it, so nothing the hub writes down shows it
   * @param clock when a kept call stops waiting for its retry
   */
  constructor(
    private readonly secrets: MintedSecrets,
    private readonly clock: Clock,
    private readonly replica?: string,
  ) {}

  // a key per hub process: the calls the states name live in this process only
  private readonly codec = createRequestStateCodec<SealedState>({
    key: randomBytes(32),
    ttlSeconds: ANSWER_WAIT_SECONDS,
    // the tenant is the hub's own finding (hub/modern/endpoint.ts), not the client's word
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

  /** Keeps a call for its client's retry, for as long as its state is valid. */
  keep(call: PendingCall): void {
    call.sealedRound += 1;
    this.calls.set(call.id, call);
    call.expiry?.cancel();
    call.expiry = this.clock.after(ANSWER_WAIT_SECONDS * 1000, () => {
      this.calls.delete(call.id);
      this.secrets.forget(call);
      call.abandon(`No answer came within ${ANSWER_WAIT_SECONDS} s; the call was cancelled.`);
    });
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
    call.expiry?.cancel();
    this.secrets.forget(call);
    return call;
  }
}

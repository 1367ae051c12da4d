// The 2026-07-28 hot path: a plain tools/call answered without an SDK server or transport. The
// SDK's way costs about 0.25 ms of CPU per call on its own (a server and a per-request transport
// built and torn down, the body classified and validated by zod several times, the result
// re-validated; bench/README.md), more than the whole 2025 hop. This path takes only a request
// every check of the SDK's would pass (the SDK's own classification, its standard-header rules,
// the tools/call request schema, restated conservatively below), and answers it only when the
// call ends in a result the SDK would pass through unchanged. Anything else goes the SDK's way,
// which answers it to the letter: a request this path does not take is handed over before the
// call starts; a call that notifies, asks its client something, fails, or returns anything
// unusual is handed over while it runs (./endpoint.ts serves the same request through the SDK,
// whose tools/call joins the call in flight instead of starting one), so the reply is the SDK's.
import { SERVER_INFO_META_KEY, type classifyInboundRequest, type ServerContext } from "@modelcontextprotocol/server";
import { isPlainObject, jsonRpcResult } from "../protocol/jsonrpc.js";
import { mediaTypeOf } from "../../servers/lib/media-type.js";
import type { Params } from "../sessions/forward.js";
import { serverInfoOf } from "../sessions/handlers.js";
import { startCall, type CallRound } from "../sessions/pending-call.js";
import type { AdoptedCall, ModernCtx } from "./server.js";
import type { Cancellation } from "../protocol/cancellation.js";

/** The revision this path serves; a request naming any other is the SDK's to answer. */
const REVISION = "2026-07-28";
/** What the SDK's standard-header rung takes as an encoded Mcp-Name: the SDK decodes (or refuses) it. */
const BASE64_SENTINEL = "=?base64?";

export type ModernRoute = ReturnType<typeof classifyInboundRequest>;

const onlyKeys = (value: Record<string, unknown>, allowed: ReadonlySet<string>) => Object.keys(value).every((key) => allowed.has(key));
const REQUEST_KEYS = new Set(["jsonrpc", "id", "method", "params"]);
const PARAMS_KEYS = new Set(["name", "arguments", "_meta"]);
const RESULT_KEYS = new Set(["content", "isError", "structuredContent", "_meta"]);
const TEXT_KEYS = new Set(["type", "text"]);
const isRequestId = (id: unknown) => typeof id === "string" || Number.isSafeInteger(id);
/** HTTP optional whitespace around a header value, as the SDK strips it. */
const stripOws = (value: string) => value.replace(/^[ \t]+|[ \t]+$/g, "");

interface PlainToolCall {
  jsonrpc: "2.0";
  id: string | number;
  method: "tools/call";
  params: Params & { name: string; _meta: Record<string, unknown> };
}

/**
 * A tools/call the SDK would hand to its handler as it is: routed modern by the SDK's classifier
 * (envelope valid, body and headers agreeing), naming the served revision, with every standard
 * header present and Mcp-Name plainly equal to the tool's name, params of the request schema's
 * shape and nothing of a retry (requestState, inputResponses). Conservative: a request the SDK
 * would also serve may be left to it; never the other way round.
 */
function isPlainToolCall(req: Request, body: unknown, route: ModernRoute, hangUp: Cancellation): body is PlainToolCall {
  if (route.kind !== "modern" || route.messageKind !== "request" || route.classification.revision !== REVISION) return false;
  if (!isPlainObject(body) || body.method !== "tools/call" || !onlyKeys(body, REQUEST_KEYS) || !isRequestId(body.id)) return false;
  const params = body.params;
  if (!isPlainObject(params) || !onlyKeys(params, PARAMS_KEYS) || typeof params.name !== "string") return false;
  if (params.arguments !== undefined && !isPlainObject(params.arguments)) return false;
  const meta = params._meta;
  // (the envelope, its progressToken included, is the classifier's to check: a route is modern only if it is valid)
  if (!isPlainObject(meta)) return false;
  if (req.method !== "POST" || mediaTypeOf(req.headers.get("content-type")) !== "application/json" || hangUp.aborted) return false;
  const name = req.headers.get("mcp-name");
  if (req.headers.get("mcp-protocol-version") === null || req.headers.get("mcp-method") === null || name === null) return false;
  const plainName = stripOws(name);
  return !plainName.startsWith(BASE64_SENTINEL) && plainName === params.name;
}

/**
 * A result the SDK's tools/call result schema passes through unchanged (text blocks of exactly
 * type and text, no resultType of its own, no serverInfo of its own), so that its encoding is the
 * SDK's: the result, "complete", and the server's identity in _meta.
 */
function plainResult(result: unknown): result is Record<string, unknown> & { _meta?: Record<string, unknown> } {
  if (!isPlainObject(result) || !onlyKeys(result, RESULT_KEYS) || !Array.isArray(result.content)) return false;
  if (result.isError !== undefined && typeof result.isError !== "boolean") return false;
  if (result._meta !== undefined && (!isPlainObject(result._meta) || SERVER_INFO_META_KEY in result._meta)) return false;
  return result.content.every((block) => isPlainObject(block) && block.type === "text" && typeof block.text === "string" && onlyKeys(block, TEXT_KEYS));
}

/**
 * A 2026 request: a plain tools/call on the direct path, anything else through the SDK (`viaSdk`).
 * `hangUp`: the client hanging up, which cancels the call as the request's AbortSignal would (the
 * signal is built only if the SDK takes the call over: creating one per call cost more than the classification).
 */
export function answerModern(
  ctx: ModernCtx,
  req: Request,
  body: unknown,
  route: ModernRoute,
  hangUp: Cancellation,
  viaSdk: (adopted?: AdoptedCall) => Promise<Response>,
) {
  if (isPlainToolCall(req, body, route, hangUp)) return answerPlainToolCall(ctx, body, req, hangUp, viaSdk);
  if (isPlainObject(body) && body.method === "tools/call") ctx.hub.metrics.modernToolCalls.inc({ answered_by: "sdk" });
  return viaSdk();
}

/**
 * The request a plain call's round names. A class, not an object literal with a getter: a literal's
 * accessor, a new closure per call, gave each call's object a hidden class of its own, and V8's
 * long-lived tree of hidden classes then kept every call's request (its body, headers and HTTP
 * message) alive through young-generation collections until the next full one.
 */
class DirectRequest {
  readonly id: string | number;
  /** The request's _meta: the envelope's keys are among them (the classifier checked them). */
  readonly envelope: CallRound["mcpReq"]["envelope"];

  constructor(
    body: PlainToolCall,
    private readonly req: Request,
    readonly notify: CallRound["mcpReq"]["notify"],
  ) {
    this.id = body.id;
    this.envelope = body.params._meta as CallRound["mcpReq"]["envelope"];
  }

  /** Read only by a round that waits on the call (PendingCall.next), not once the call has ended. */
  get signal(): AbortSignal {
    return this.req.signal;
  }
}

/** What can happen first to a call on this path: it ends, or it needs the SDK (a notification, a question). */
type First = "ended" | "handover";

/**
 * Runs a plain tools/call and answers it with JSON, or hands the call in flight to `viaSdk`
 * (which serves the same request through the SDK, joining this call) the moment it needs more
 * than a plain result.
 */
async function answerPlainToolCall(
  ctx: ModernCtx,
  body: PlainToolCall,
  req: Request,
  hangUp: Cancellation,
  viaSdk: (adopted: AdoptedCall) => Promise<Response>,
): Promise<Response> {
  let first!: (what: First) => void;
  const happened = new Promise<First>((resolve) => (first = resolve));
  // notifications before the SDK's round joins wait here, in order, for it
  const held: Array<Parameters<CallRound["mcpReq"]["notify"]>[0]> = [];
  let joined: ServerContext | undefined;
  const notify = (notification: Parameters<CallRound["mcpReq"]["notify"]>[0]) => {
    held.push(notification);
    first("handover");
    return Promise.resolve();
  };
  const round: CallRound = { mcpReq: new DirectRequest(body, req, notify) };
  const { call, running } = startCall(ctx, body.params, round, () => first("handover"));
  // the client hanging up cancels the call, as the SDK's request signal does
  const cancel = () => call.cancellation.abort("the client cancelled the call");
  hangUp.addEventListener("abort", cancel);
  running.then(
    () => first("ended"),
    () => first("ended"),
  );
  const what = await happened;
  if (what === "ended") {
    const next = await call.next(round).catch(() => undefined);
    const result = next && "result" in next ? next.result : undefined;
    if (plainResult(result)) {
      hangUp.removeEventListener("abort", cancel);
      for (const action of call.afterReply) queueMicrotask(action);
      ctx.hub.metrics.modernToolCalls.inc({ answered_by: "direct" });
      const meta = { ...result._meta, [SERVER_INFO_META_KEY]: serverInfoOf(ctx.hub) };
      return jsonRpcResult(body.id, { ...result, resultType: "complete", _meta: meta });
    }
  }
  ctx.hub.metrics.modernToolCalls.inc({ answered_by: "sdk" });
  const response = await viaSdk({
    call,
    join(sdkRound) {
      if (joined) return;
      joined = sdkRound;
      // from here the SDK's request signal cancels the call (PendingCall.next listens to it)
      hangUp.removeEventListener("abort", cancel);
      call.round = sdkRound;
      for (const notification of held.splice(0)) void sdkRound.mcpReq.notify(notification).catch(() => undefined);
    },
  });
  // the SDK answered without running tools/call (the client had hung up): the request's signal still cancels a call that
  // runs on, and what the call leaves for after its reply is done once it ends
  if (!joined) {
    const afterReply = () => call.afterReply.forEach((action) => queueMicrotask(action));
    running.then(afterReply, afterReply);
  }
  return response;
}

// The hub's spans (servers/lib/tracing.ts starts the SDK): an HTTP request to an MCP path (SERVER),
// each MCP request it serves (SERVER, continuing the client's `_meta.traceparent` when it sent one),
// and each request it forwards to a child (CLIENT, whose context the child is sent in its `_meta`).
// Attributes follow the OpenTelemetry MCP and GenAI conventions; argument values are never recorded,
// nor a session's id (its label stands for it).
import type { Context, MiddlewareHandler, Next } from "hono";
import { ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE, ATTR_URL_PATH } from "@opentelemetry/semantic-conventions";
import { ATTR_MCP_PROTOCOL_VERSION, ATTR_MCP_SESSION_ID } from "@opentelemetry/semantic-conventions/incubating";
import { SpanStatusCode } from "@opentelemetry/api";
import {
  inSpan,
  mcpAttributes,
  mcpSpanName,
  mcpTargetOf,
  parentFrom,
  parentFromHeaders,
  runIn,
  SpanKind,
  startSpan,
  tracingEnabled,
  withTraceMeta,
} from "../../servers/lib/tracing.js";
import { mediaTypeOf } from "../../servers/lib/media-type.js";
import { sessionLabel } from "./session-label.js";

export const TENANT_ATTRIBUTE = "agentbox.tenant";
export const SERVER_ATTRIBUTE = "agentbox.server";

/**
 * An HTTP request's span, continuing the client's `traceparent` header; what runs for the request runs
 * inside it. A reply that is an SSE stream, still being written, ends the span when the stream does,
 * so the calls it carries end within it.
 */
export function httpTracing(route: string): MiddlewareHandler {
  // with tracing off (the default) a request costs one check, not an async wrapper's promise
  return (c, next) => (tracingEnabled() ? traced(c, next) : next());
  async function traced(c: Context, next: Next): Promise<void> {
    const parent = parentFromHeaders(c.req.raw.headers);
    const attributes = { [ATTR_HTTP_REQUEST_METHOD]: c.req.method, [ATTR_HTTP_ROUTE]: route, [ATTR_URL_PATH]: c.req.path };
    const span = startSpan(`${c.req.method} ${route}`, SpanKind.SERVER, attributes, parent);
    let endsWithBody = false;
    try {
      await runIn(span, parent, next);
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, c.res.status);
      if (c.res.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      // a JSON reply is whole by now (the direct path answers once the call has ended): only a stream is followed to its end
      const body = mediaTypeOf(c.res.headers.get("content-type")) === "text/event-stream" ? c.res.body : null;
      if (body) {
        c.res = new Response(
          endingWith(body, () => span.end()),
          c.res,
        );
        endsWithBody = true;
      }
    } finally {
      if (!endsWithBody) span.end();
    }
  }
}

/** `body` as it comes, and `done` called once when it has been read to its end, has failed or was cancelled (the client went away). */
function endingWith(body: ReadableStream<Uint8Array>, done: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    done();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const read = await reader.read();
        if (read.done) {
          finish();
          controller.close();
        } else controller.enqueue(read.value);
      } catch (err) {
        finish();
        controller.error(err);
      }
    },
    cancel(reason) {
      finish();
      return reader.cancel(reason);
    },
  });
}

/** Who made a tools/call: its session (2025) or context (2026) and tenant. */
export interface TracedCaller {
  id: string;
  kind: string;
  tenant: { name: string };
  negotiatedVersion?: string;
}

/**
 * A request the hub serves (tools/call, prompts/get, resources/read, a listing…), in a span continuing
 * the client's `_meta.traceparent` (else the HTTP request's span); `params` are the client's, unchecked.
 */
export function traceRequest<T>(
  caller: TracedCaller,
  method: string,
  params: unknown,
  requestId: string | number | undefined,
  work: () => Promise<T>,
): Promise<T> {
  if (!tracingEnabled()) return work();
  const target = mcpTargetOf(method, params);
  const attributes = {
    ...mcpAttributes(method, target, requestId),
    [TENANT_ATTRIBUTE]: caller.tenant.name,
    // a 2026 request has no session: its context's id is the hub's, not the client's; a session's id
    // is a credential, so a trace names it as the audit trail and hub_sessions do, by its label
    ...(caller.kind === "modern" ? { [ATTR_MCP_PROTOCOL_VERSION]: "2026-07-28" } : { [ATTR_MCP_SESSION_ID]: sessionLabel(caller.id) }),
    ...(caller.negotiatedVersion ? { [ATTR_MCP_PROTOCOL_VERSION]: caller.negotiatedVersion } : {}),
  };
  const meta = typeof params === "object" && params !== null ? (params as { _meta?: unknown })._meta : undefined;
  return inSpan(mcpSpanName(method, target), SpanKind.SERVER, attributes, parentFrom(meta), work);
}

/**
 * A request forwarded to a child, in a CLIENT span; `send` gets the params with that span's context
 * in `_meta` in place of any the client put there (which the hub's own span already continues).
 */
export function traceChildRequest<T>(
  server: string,
  method: string,
  params: { _meta?: Record<string, unknown> },
  send: (params: { _meta?: Record<string, unknown> }) => Promise<T>,
): Promise<T> {
  if (!tracingEnabled()) return send(params);
  const target = mcpTargetOf(method, params);
  const attributes = { ...mcpAttributes(method, target), [SERVER_ATTRIBUTE]: server };
  return inSpan(mcpSpanName(method, target), SpanKind.CLIENT, attributes, undefined, () => send({ ...params, _meta: withTraceMeta(params._meta ?? {}) }));
}

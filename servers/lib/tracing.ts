// OpenTelemetry traces, shared by the hub and the built-in servers. Off unless an OTLP endpoint is
// set (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT): then the SDK is loaded
// (dynamic import, so a hub without traces never loads it) and registered globally, reading the
// standard OTEL_* variables itself (endpoint, headers, sampler, batch sizes, resource attributes).
// Off, every helper here runs its work directly: not even the API's no-op spans are made.
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from "@opentelemetry/api";
import { ATTR_ERROR_TYPE, ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROMPT_NAME,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_RESOURCE_URI,
  ATTR_RPC_RESPONSE_STATUS_CODE,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
} from "@opentelemetry/semantic-conventions/incubating";

export { SpanKind };

/** Where W3C trace context travels in an MCP request's params._meta (SEP-414). */
const TRACE_META_KEYS = ["traceparent", "tracestate", "baggage"] as const;
/**
 * The longest value taken from a client: a traceparent is 55 characters, W3C caps tracestate at 32
 * members of 256 and baggage at 8192 bytes. Anything longer is ignored whole, unparsed.
 */
const MAX_CARRIER_CHARS: Record<(typeof TRACE_META_KEYS)[number], number> = { traceparent: 128, tracestate: 1024, baggage: 8192 };
const PROTOCOLS = ["http/protobuf", "http/json"];

let enabled = false;
let provider: { shutdown(): Promise<void>; forceFlush(): Promise<void> } | undefined;

export const tracingEnabled = (): boolean => enabled;
const tracer = () => trace.getTracer("agentbox");

/** A configuration the hub cannot trace with: said once at startup, in words an operator can act on. */
export class TracingConfigError extends Error {}

/** Whether OTEL_* asks for traces: an OTLP endpoint is set. */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim());
}

/** The exporter's protocol as OTEL_* names it; anything this image has no exporter for is refused by name. */
export function tracesProtocol(env: NodeJS.ProcessEnv = process.env): string {
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim() || env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim() || "http/protobuf").toLowerCase();
  if (protocol === "grpc") {
    throw new TracingConfigError(
      "OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: agentbox exports traces over OTLP/HTTP. Set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf " +
        "and point OTEL_EXPORTER_OTLP_ENDPOINT at the collector's HTTP port (usually 4318).",
    );
  }
  if (!PROTOCOLS.includes(protocol)) {
    throw new TracingConfigError(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not a protocol agentbox exports with: use http/protobuf (default) or http/json.`);
  }
  return protocol;
}

/**
 * The service.name: OTEL_SERVICE_NAME (default `agentbox`) for the hub, with `-<server>` after it for
 * a built-in server, which inherits the hub's environment: each process is told apart in a trace.
 */
export function serviceName(server?: string): string {
  const base = process.env.OTEL_SERVICE_NAME?.trim() || "agentbox";
  return server ? `${base}-${server}` : base;
}

/**
 * Starts exporting traces when OTEL_* asks for it; false when it does not. Throws TracingConfigError for a protocol that
 * cannot be served.
 */
export async function startTracing(service: string): Promise<boolean> {
  if (!tracingRequested()) return false;
  const protocol = tracesProtocol();
  const [sdk, resources, exporter] = await Promise.all([
    import("@opentelemetry/sdk-trace-node"),
    import("@opentelemetry/resources"),
    protocol === "http/json" ? import("@opentelemetry/exporter-trace-otlp-http") : import("@opentelemetry/exporter-trace-otlp-proto"),
  ]);
  // the SDK's env detector reads OTEL_RESOURCE_ATTRIBUTES; the service name is ours (serviceName, which reads OTEL_SERVICE_NAME)
  const resource = resources
    .defaultResource()
    .merge(resources.detectResources({ detectors: [resources.envDetector] }))
    .merge(resources.resourceFromAttributes({ [ATTR_SERVICE_NAME]: service }));
  const node = new sdk.NodeTracerProvider({ resource, spanProcessors: [new sdk.BatchSpanProcessor(new exporter.OTLPTraceExporter())] });
  // registers the W3C trace-context and baggage propagators and the AsyncLocalStorage context manager
  node.register();
  provider = node;
  enabled = true;
  return true;
}

/** Sends the spans still buffered and stops exporting; a no-op when traces are off. */
export async function stopTracing(): Promise<void> {
  const stopping = provider;
  provider = undefined;
  enabled = false;
  await stopping?.shutdown().catch(() => undefined);
}

/** The trace context carried in a request's `_meta`, each value bounded and a string, or nothing. */
function carrierOf(meta: unknown): Record<string, string> | undefined {
  if (typeof meta !== "object" || meta === null) return undefined;
  const carrier: Record<string, string> = {};
  for (const key of TRACE_META_KEYS) {
    const value = (meta as Record<string, unknown>)[key];
    if (typeof value === "string" && value.length <= MAX_CARRIER_CHARS[key]) carrier[key] = value;
  }
  return carrier.traceparent ? carrier : undefined;
}

/**
 * The context a request's span continues: the trace its `_meta` names (SEP-414) when that is a
 * valid W3C traceparent, else `fallback` (an HTTP request's own span, or none). A malformed or
 * oversized value is ignored: the propagator validates what it parses, and nothing is echoed.
 */
export function parentFrom(meta: unknown, fallback: Context = context.active()): Context {
  const carrier = carrierOf(meta);
  if (!carrier) return fallback;
  const extracted = propagation.extract(ROOT_CONTEXT, carrier);
  return trace.getSpanContext(extracted) ? extracted : fallback;
}

/** The context of an HTTP request's W3C headers (traceparent, tracestate, baggage), bounded like `_meta`'s. */
export function parentFromHeaders(headers: Headers): Context {
  return parentFrom({ traceparent: headers.get("traceparent"), tracestate: headers.get("tracestate"), baggage: headers.get("baggage") }, ROOT_CONTEXT);
}

/** `meta` without the trace context a client put in it, and with the current span's: what a child is sent. */
export function withTraceMeta(meta: Record<string, unknown>): Record<string, unknown> {
  const { traceparent: _p, tracestate: _s, baggage: _b, ...rest } = meta;
  propagation.inject(context.active(), rest);
  return rest;
}

/** What an MCP request acts on, as its span names it: a tool, a prompt or a resource. */
export interface McpTarget {
  tool?: string;
  prompt?: string;
  resourceUri?: string;
}

/** The target a request's params name, read defensively: params are the client's, unchecked here. */
export function mcpTargetOf(method: string, params: unknown): McpTarget {
  const p = (typeof params === "object" && params !== null ? params : {}) as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === "string" ? value : undefined);
  if (method === "tools/call") return { tool: text(p.name) };
  if (method === "prompts/get") return { prompt: text(p.name) };
  if (method.startsWith("resources/") && method !== "resources/list" && method !== "resources/templates/list") return { resourceUri: text(p.uri) };
  if (method === "completion/complete") {
    const ref = (typeof p.ref === "object" && p.ref !== null ? p.ref : {}) as Record<string, unknown>;
    return ref.type === "ref/prompt" ? { prompt: text(ref.name) } : { resourceUri: text(ref.uri) };
  }
  return {};
}

// Names and ids the client chose are cut short: a megabyte-long tool name or request id must not
// become a megabyte span held in the exporter's queue (2048 spans) and sent on.
const MAX_CHOSEN_CHARS = 256;
const bounded = (text: string) => (text.length > MAX_CHOSEN_CHARS ? `${text.slice(0, MAX_CHOSEN_CHARS - 1)}…` : text);

/** Attributes of an MCP request's span (semconv mcp.* and gen_ai.*): never argument values. */
export function mcpAttributes(method: string, target: McpTarget = {}, requestId?: string | number): Attributes {
  return {
    [ATTR_MCP_METHOD_NAME]: method,
    ...(target.tool !== undefined
      ? { [ATTR_GEN_AI_TOOL_NAME]: bounded(target.tool), [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL }
      : {}),
    ...(target.prompt !== undefined ? { [ATTR_GEN_AI_PROMPT_NAME]: bounded(target.prompt) } : {}),
    ...(target.resourceUri !== undefined ? { [ATTR_MCP_RESOURCE_URI]: bounded(target.resourceUri) } : {}),
    ...(requestId !== undefined ? { [ATTR_JSONRPC_REQUEST_ID]: bounded(String(requestId)) } : {}),
  };
}

/** The span name the MCP conventions give: `{method} {target}` (the tool's or prompt's name), or the method alone. */
export function mcpSpanName(method: string, target: McpTarget = {}): string {
  const name = target.tool ?? target.prompt;
  return name !== undefined ? `${method} ${bounded(name)}` : method;
}

/** How a call ended, as the span records it: a thrown error's JSON-RPC code, or a tool's own error result. */
function recordOutcome(span: Span, outcome: { error: unknown } | { result: unknown }): void {
  if ("error" in outcome) {
    const err = outcome.error as { code?: unknown; name?: unknown } | undefined;
    const code = typeof err?.code === "number" ? err.code : undefined;
    span.setAttributes({
      [ATTR_ERROR_TYPE]: code !== undefined ? String(code) : typeof err?.name === "string" ? err.name : "_OTHER",
      ...(code !== undefined ? { [ATTR_RPC_RESPONSE_STATUS_CODE]: String(code) } : {}),
    });
    span.setStatus({ code: SpanStatusCode.ERROR });
  } else if ((outcome.result as { isError?: unknown } | undefined)?.isError === true) {
    // the MCP conventions' name for a tool that ran and reported failure
    span.setAttribute(ATTR_ERROR_TYPE, "tool_error");
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
}

/** Runs `work` in a span of its own (child of `parent`), recording how it ended; `work` alone when traces are off. */
export async function inSpan<T>(name: string, kind: SpanKind, attributes: Attributes, parent: Context | undefined, work: () => Promise<T>): Promise<T> {
  if (!enabled) return work();
  const span = tracer().startSpan(name, { kind, attributes }, parent ?? context.active());
  try {
    const result = await context.with(trace.setSpan(parent ?? context.active(), span), work);
    recordOutcome(span, { result });
    return result;
  } catch (error) {
    recordOutcome(span, { error });
    throw error;
  } finally {
    span.end();
  }
}

/** A span for work whose end is known only later (an HTTP reply): the caller ends it. */
export function startSpan(name: string, kind: SpanKind, attributes: Attributes, parent: Context): Span {
  return tracer().startSpan(name, { kind, attributes }, parent);
}

export const runIn = <T>(span: Span, parent: Context, work: () => T): T => context.with(trace.setSpan(parent, span), work);

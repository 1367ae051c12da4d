// OpenTelemetry traces end to end: a client's tools/call carrying a W3C traceparent yields spans of
// that same trace from the hub (its tools/call span, its CLIENT span to the child) and from the
// server that ran the call, parents linked, exported over OTLP/HTTP to a real collector on loopback;
// for a 2025 session (SDK v1) and a 2026-07-28 request (SDK v2). No argument value, key or session id is exported;
// hostile trace context is ignored; nothing is exported when no endpoint is set.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateTaskResultSchema, type CallToolRequest, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { startCollector, type OtlpCollector, type ReceivedSpan } from "../../helpers/otlp-collector.js";
import { until } from "../../helpers/wait.js";
import { connectModern, postModern, startTask, withTasks } from "../modern/modern-client.js";
import { tracesProtocol } from "../../../servers/lib/tracing.js";
import { bundled } from "../../../hub/config/config.js";
import { sessionLabel } from "../../../hub/observability/session-label.js";
import { connectAs, untilStatus } from "../tasks/legacy-client.js";

const KEY = `alice-${randomBytes(16).toString("hex")}`;
const auth = { Authorization: `Bearer ${KEY}` };
const hex = (bytes: number) => randomBytes(bytes).toString("hex");
/** A W3C traceparent as a client sends it: its trace, and its own span the hub's continues. */
const traceparentOf = (traceId: string, spanId: string) => `00-${traceId}-${spanId}-01`;
/** What a tools/call's argument holds: it must appear in no exported span. */
const secretArgument = () => `argument-value-${hex(12)}`;

const tracedEnv = (collector: OtlpCollector, extra: Record<string, string> = {}) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
  OTEL_BSP_SCHEDULE_DELAY: "50",
  ...extra,
});

const startTracedHub = (collector: OtlpCollector, extra: Record<string, string> = {}) =>
  startHub({
    servers: ["file"],
    extraServers: { echo: { ...fixture("echo-server"), taskSupport: { echo: "optional" } } },
    config: { tenants: { alice: { apiKey: KEY } } },
    env: tracedEnv(collector, extra),
  });

/** The hub's tools/call span, its CLIENT span to the child, and the child's own span, once all three are exported. */
async function callSpans(collector: OtlpCollector, traceId: string, tool = "echo") {
  return until(`the three spans of trace ${traceId}`, () => {
    const of = collector.spans.filter((s) => s.traceId === traceId);
    const hubCall = of.find((s) => s.service === "agentbox" && s.kind === "SERVER" && s.name === `tools/call echo_${tool}`);
    const forwarded = of.find((s) => s.service === "agentbox" && s.kind === "CLIENT" && s.name === `tools/call ${tool}`);
    const served = of.find((s) => s.service === "agentbox-echo" && s.kind === "SERVER" && s.name === `tools/call ${tool}`);
    return hubCall && forwarded && served ? { hubCall, forwarded, served } : undefined;
  });
}

function assertLinked(spans: { hubCall: ReceivedSpan; forwarded: ReceivedSpan; served: ReceivedSpan }, clientSpanId: string, tool = "echo"): void {
  const { hubCall, forwarded, served } = spans;
  assert.equal(hubCall.parentSpanId, clientSpanId, "the hub's span continues the client's");
  assert.equal(forwarded.parentSpanId, hubCall.spanId, "the forwarded call is a child of the hub's tools/call");
  assert.equal(served.parentSpanId, forwarded.spanId, "the server's span continues the hub's CLIENT span");
  for (const span of [hubCall, forwarded, served]) {
    assert.equal(span.attributes["mcp.method.name"], "tools/call");
    assert.equal(span.attributes["gen_ai.operation.name"], "execute_tool");
  }
  assert.equal(hubCall.attributes["gen_ai.tool.name"], `echo_${tool}`);
  assert.equal(hubCall.attributes["agentbox.tenant"], "alice");
  assert.equal(forwarded.attributes["agentbox.server"], "echo");
  assert.equal(served.attributes["gen_ai.tool.name"], tool);
  assert.equal(typeof served.attributes["jsonrpc.request.id"], "string");
}

function assertNothingSecret(collector: OtlpCollector, ...secrets: string[]): void {
  const raw = collector.rawBodies.join("\n");
  for (const secret of [KEY, ...secrets]) assert.ok(!raw.includes(secret), `an exported span holds ${secret.slice(0, 24)}…`);
}

describe("traces over OTLP/HTTP (protobuf)", () => {
  let collector: OtlpCollector;
  let hub: TestHub;
  const secrets: string[] = [];

  before(async () => {
    collector = await startCollector();
    hub = await startTracedHub(collector);
  });
  after(async () => {
    await hub?.stop();
    await collector?.close();
  });

  /** echo_echo called with a traceparent of a new trace (and a secret argument): its spans, checked linked to the client's. */
  async function tracedEcho(client: { callTool(params: CallToolRequest["params"]): Promise<unknown> }) {
    const [traceId, spanId, text] = [hex(16), hex(8), secretArgument()];
    secrets.push(text);
    const result = (await client.callTool({
      name: "echo_echo",
      arguments: { text },
      _meta: { traceparent: traceparentOf(traceId, spanId) },
    })) as CallToolResult;
    assert.equal(textOf(result), text);
    const spans = await callSpans(collector, traceId);
    assertLinked(spans, spanId);
    return spans;
  }

  test("a 2025 session's call continues the client's _meta.traceparent through the hub into the server", async () => {
    const client = await hub.connect({ headers: auth });
    const spans = await tracedEcho(client);
    // the id is a credential: spans name the session by the label the audit trail and hub_sessions use
    const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!;
    assert.equal(spans.hubCall.attributes["mcp.session.id"], sessionLabel(sessionId));
    secrets.push(sessionId);
    assert.equal(typeof spans.hubCall.attributes["jsonrpc.request.id"], "string");
    assert.ok(spans.hubCall.encoding === "protobuf");
    await client.close();
  });

  test("a 2026-07-28 request's call (SDK v2 client) continues its _meta.traceparent", async () => {
    const client = await connectModern(hub, { headers: auth });
    const spans = await tracedEcho(client);
    assert.equal(spans.hubCall.attributes["mcp.protocol.version"], "2026-07-28");
    assert.equal(typeof spans.hubCall.attributes["jsonrpc.request.id"], "string");
    await client.close();
  });

  test("a 2026-07-28 call on /v1/mcp that reports progress (so the SDK's path serves it) continues its traceparent", async () => {
    const client = await connectModern({ ...hub, url: `${hub.origin}/v1/mcp` }, { headers: auth });
    const [traceId, spanId] = [hex(16), hex(8)];
    let progressed = 0;
    const meta = { traceparent: traceparentOf(traceId, spanId) };
    await client.callTool({ name: "echo_slow", arguments: { steps: 2, delayMs: 20 }, _meta: meta }, { onprogress: () => void progressed++ });
    assert.ok(progressed > 0, "the call reported progress");
    assertLinked(await callSpans(collector, traceId, "slow"), spanId, "slow");
    await client.close();
  });

  test("a 2025 call run as a task is in the client's trace, through the server that ran it", async () => {
    const client = await connectAs(hub, KEY);
    const [traceId, spanId, text] = [hex(16), hex(8), secretArgument()];
    secrets.push(text);
    const params = { name: "echo_echo", arguments: { text }, task: { ttl: 60_000 }, _meta: { traceparent: traceparentOf(traceId, spanId) } };
    const { task } = await client.request({ method: "tools/call", params }, CreateTaskResultSchema);
    await untilStatus(client, task.taskId, ["completed"]);
    assertLinked(await callSpans(collector, traceId), spanId);
    await client.close();
  });

  test("without _meta trace context, the call continues the HTTP traceparent header through the request's span, which lasts as long as its reply", async () => {
    const [traceId, spanId, text] = [hex(16), hex(8), secretArgument()];
    secrets.push(text);
    const client = await hub.connect({ headers: { ...auth, traceparent: traceparentOf(traceId, spanId) } });
    await client.callTool({ name: "echo_echo", arguments: { text } });
    const spans = await callSpans(collector, traceId);
    const http = collector.spans.find((s) => s.spanId === spans.hubCall.parentSpanId);
    assert.ok(http, "the tools/call span's parent is the HTTP request's span");
    assert.equal(http.kind, "SERVER");
    assert.equal(http.name, "POST /mcp");
    assert.equal(http.parentSpanId, spanId);
    assert.equal(spans.served.parentSpanId, spans.forwarded.spanId);
    // a call that reports progress is answered as an SSE stream, returned before the call ends: the request's span lasts as long as the stream
    await client.callTool({ name: "echo_slow", arguments: { steps: 3, delayMs: 100 } }, undefined, { onprogress: () => undefined });
    const slow = await callSpans(collector, traceId, "slow");
    const streamed = collector.spans.find((s) => s.spanId === slow.hubCall.parentSpanId);
    assert.equal(streamed?.name, "POST /mcp");
    assert.ok(streamed.endNs >= slow.hubCall.endNs, `the HTTP span ended ${Number(slow.hubCall.endNs - streamed.endNs) / 1e6} ms before the call it carried`);
    await client.close();
  });

  test("every request the hub serves has its span in the client's trace: a listing, a resource read (through to its server), in either era", async () => {
    const client = await hub.connect({ headers: auth });
    assert.equal((await client.callTool({ name: "file_write", arguments: { path: "traced.txt", content: "x" } })).isError, undefined);
    const [traceId, spanId] = [hex(16), hex(8)];
    const _meta = { traceparent: traceparentOf(traceId, spanId) };
    await client.listTools({ _meta });
    await client.readResource({ uri: "file:///traced.txt", _meta });
    const modern = await connectModern(hub, { headers: auth });
    await modern.listPrompts({ _meta });
    // the tasks extension's tasks/get, which the hub answers before any SDK server sees it
    const taskId = await startTask(hub, auth, "echo_echo", { text: "as a task" });
    const polled = await postModern(
      hub,
      { id: 77, method: "tasks/get", params: { taskId, _meta: { ...withTasks, ..._meta } } },
      { ...auth, "Mcp-Name": taskId },
    );
    assert.equal(polled.json?.result?.taskId, taskId, polled.text);
    const ofTrace = () => collector.spans.filter((s) => s.traceId === traceId && s.service === "agentbox");
    const named = (name: string, kind = "SERVER") => ofTrace().find((s) => s.name === name && s.kind === kind);
    await until(
      "the requests' spans",
      () => named("tools/list") && named("resources/read") && named("resources/read", "CLIENT") && named("prompts/list") && named("tasks/get"),
    );
    for (const name of ["tools/list", "resources/read", "prompts/list", "tasks/get"]) {
      const span = named(name)!;
      assert.equal(span.parentSpanId, spanId, `${name} continues the client's span`);
      assert.equal(span.attributes["mcp.method.name"], name);
      assert.equal(span.attributes["agentbox.tenant"], "alice");
      assert.equal(typeof span.attributes["jsonrpc.request.id"], "string");
    }
    assert.equal(named("prompts/list")!.attributes["mcp.protocol.version"], "2026-07-28");
    assert.equal(named("resources/read")!.attributes["mcp.resource.uri"], "file:///traced.txt");
    const forwarded = named("resources/read", "CLIENT")!;
    assert.equal(forwarded.parentSpanId, named("resources/read")!.spanId);
    assert.equal(forwarded.attributes["agentbox.server"], "file");
    await client.close();
    await modern.close();
  });

  test("a megabyte of tool name, resource URI or request id the client chose is cut short in its span, and the hub keeps serving", async () => {
    const client = await hub.connect({ headers: auth });
    const [traceId, spanId] = [hex(16), hex(8)];
    const _meta = { traceparent: traceparentOf(traceId, spanId) };
    const long = `long${hex(8)}${"n".repeat(500_000)}`;
    const unknown = (await client.callTool({ name: long, arguments: {}, _meta }).catch((e: Error) => e)) as Error;
    assert.match(unknown.message, /Unknown tool/);
    await assert.rejects(client.readResource({ uri: `file:///${long}`, _meta }));
    const response = await fetch(`${hub.origin}/mcp`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: long, method: "tools/list", params: { _meta } }),
    });
    await response.body?.cancel();
    const spans = await until("the three requests' spans", () => {
      const of = collector.spans.filter((s) => s.traceId === traceId && s.service === "agentbox" && s.kind === "SERVER");
      return of.length >= 3 ? of : undefined;
    });
    for (const span of spans) {
      assert.ok(span.name.length < 300, `a span named ${span.name.length} characters`);
      for (const value of Object.values(span.attributes)) assert.ok(String(value).length <= 256, `an attribute of ${String(value).length} characters`);
    }
    assert.ok(!collector.rawBodies.join("\n").includes("n".repeat(1000)), "the long name was exported whole");
    assert.equal((await fetch(`${hub.origin}/healthz`)).status, 200);
    await client.close();
  });

  test("hostile trace context (malformed, oversized traceparent; huge baggage) is ignored, never echoed, and the call still runs", async () => {
    const client = await hub.connect({ headers: auth });
    const marker = `hostile${hex(8)}`;
    const hostile: Array<Record<string, string>> = [
      { traceparent: `00-${marker}-${marker}-01` },
      { traceparent: `00-${hex(16)}-${hex(8)}-01${"-".repeat(1)}${marker.repeat(5000)}` },
      { traceparent: `00-${"0".repeat(32)}-${hex(8)}-01` },
      { traceparent: traceparentOf(hex(16), hex(8)), baggage: `k=${marker}${"x".repeat(200_000)}`, tracestate: `a=${marker}${"y".repeat(50_000)}` },
      { traceparent: traceparentOf(hex(16), hex(8)), baggage: Array.from({ length: 5000 }, (_, i) => `${marker}${i}=v`).join(",") },
    ];
    const served = () => collector.spans.filter((s) => s.name === "tools/call echo" && s.service === "agentbox-echo");
    const before = served().length;
    for (const meta of hostile) {
      const text = secretArgument();
      secrets.push(text);
      const result = (await client.callTool({ name: "echo_echo", arguments: { text }, _meta: meta })) as CallToolResult;
      assert.equal(textOf(result), text);
    }
    // the calls' spans are exported, in traces of the hub's own making, and none carries the marker
    await until("the hostile calls' spans", () => served().length >= before + hostile.length);
    assert.ok(!collector.rawBodies.join("\n").includes(marker), "hostile trace context was exported");
    const status = await fetch(`${hub.origin}/healthz`);
    assert.equal(status.status, 200);
    await client.close();
  });

  test("no exported span holds an argument value or the tenant's key", async () => {
    await until("spans exported", () => collector.spans.length > 0);
    assertNothingSecret(collector, ...secrets);
  });
});

describe("traces over OTLP/HTTP (JSON)", () => {
  test("OTEL_EXPORTER_OTLP_PROTOCOL=http/json exports the same linked spans as JSON", async () => {
    const collector = await startCollector();
    const hub = await startTracedHub(collector, { OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" });
    try {
      const client = await hub.connect({ headers: auth });
      const [traceId, spanId, text] = [hex(16), hex(8), secretArgument()];
      await client.callTool({ name: "echo_echo", arguments: { text }, _meta: { traceparent: traceparentOf(traceId, spanId) } });
      const spans = await callSpans(collector, traceId);
      assertLinked(spans, spanId);
      assert.equal(spans.hubCall.encoding, "json");
      assertNothingSecret(collector, text);
      await client.close();
    } finally {
      await hub.stop();
      await collector.close();
    }
  });
});

describe("traces off", () => {
  test("with no OTLP endpoint set, nothing is exported, not even to the SDK's default endpoint", async (t) => {
    // where an SDK started without an endpoint would send its spans (http://localhost:4318), on both loopback families
    const defaults = await Promise.all([startCollector(4318, "127.0.0.1"), startCollector(4318, "::1")]).catch(() => undefined);
    if (!defaults) return t.skip("port 4318 is taken on this machine");
    try {
      const hub = await startHub({ extraServers: { echo: fixture("echo-server") }, env: { OTEL_BSP_SCHEDULE_DELAY: "50" } });
      try {
        const client = await hub.connect();
        await client.callTool({ name: "echo_echo", arguments: { text: "hi" }, _meta: { traceparent: traceparentOf(hex(16), hex(8)) } });
        await client.close();
      } finally {
        await hub.stop();
      }
      // stopping flushes what a tracing hub and its servers hold: had any traced, a collector would have it now
      assert.deepEqual(
        defaults.map((c) => c.requests),
        [0, 0],
      );
    } finally {
      await Promise.all(defaults.map((c) => c.close()));
    }
  });

  test("OTEL_EXPORTER_OTLP_PROTOCOL=grpc is refused with a message saying to use http/protobuf", () => {
    assert.throws(() => tracesProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }), /grpc is not supported.*http\/protobuf/);
    assert.throws(() => tracesProtocol({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "carrier-pigeon" }), /http\/protobuf \(default\) or http\/json/);
    assert.equal(tracesProtocol({}), "http/protobuf");
    // and the hub refuses to start with it, saying so, rather than run without the traces asked for
    const run = spawnSync(process.execPath, [bundled("hub"), "--port", "0"], {
      env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
      encoding: "utf8",
      timeout: 30_000,
    });
    assert.equal(run.status, 2, run.stderr);
    assert.match(run.stderr, /grpc is not supported.*OTEL_EXPORTER_OTLP_PROTOCOL=http\/protobuf/);
  });
});

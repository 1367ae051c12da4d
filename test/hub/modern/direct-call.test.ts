// The 2026-07-28 direct path for a plain tools/call (hub/modern/direct.ts) must
// answer exactly as the SDK would. Each request of the table is sent twice: as it is, which the
// direct path may take, and with its Mcp-Name in the revision's base64 form (the same request to
// the SDK, which decodes it; the direct path leaves every encoded name to the SDK), and the two
// replies must be the same: status, content type and every JSON-RPC message. Valid calls, calls
// that end unusually (an error, a progress stream, a log line, a question the caller cannot or
// can answer) and requests an agent crafts to slip past a check are all in the table.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { fixture, startHub, type TestHub } from "../../helpers/hub.js";
import { until, untilQueue } from "../../helpers/wait.js";
import { envelope, MODERN } from "./modern-client.js";

interface Reply {
  status: number;
  type: string;
  messages: unknown[];
}

const encoded = (name: string) => `=?base64?${Buffer.from(name, "utf8").toString("base64")}?=`;

async function post(hub: TestHub, body: Record<string, unknown>, headers: Record<string, string>): Promise<Reply> {
  const all: Record<string, string> = {
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    "MCP-Protocol-Version": MODERN,
    "Mcp-Method": "tools/call",
    ...headers,
  };
  const res = await fetch(hub.url, {
    method: "POST",
    headers: Object.fromEntries(Object.entries(all).filter(([, value]) => value !== "")),
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const type = (res.headers.get("content-type") ?? "").split(";")[0];
  const messages =
    type === "text/event-stream" ? [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]) as unknown) : text ? [JSON.parse(text) as unknown] : [];
  return { status: res.status, type, messages };
}

async function directCalls(hub: TestHub, answeredBy: "direct" | "sdk"): Promise<number> {
  const metrics = await (await fetch(hub.origin + "/metrics")).text();
  const line = metrics.split("\n").find((l) => l.startsWith(`agentbox_modern_tool_calls_total{answered_by="${answeredBy}"}`));
  return line ? Number(line.split(" ").pop()) : 0;
}

const call = (id: unknown, params: Record<string, unknown>) => ({ jsonrpc: "2.0", id, method: "tools/call", params });

/** name: the tool's name as the Mcp-Name header carries it (the direct form, or the encoded one for the SDK). */
interface Case {
  what: string;
  body: Record<string, unknown>;
  name: string;
  headers?: Record<string, string>;
  /** Whether the direct path answers it itself (the rest it hands to the SDK or never takes). */
  direct?: boolean;
}

const CASES: Case[] = [
  { what: "a plain call", body: call(1, { name: "echo_echo", arguments: { text: "hi" }, _meta: envelope() }), name: "echo_echo", direct: true },
  { what: "a string id", body: call("abc", { name: "echo_echo", arguments: { text: "x" }, _meta: envelope() }), name: "echo_echo", direct: true },
  {
    what: "structured content",
    body: call(2, { name: "echo_stats", arguments: {}, _meta: envelope() }),
    name: "echo_stats",
    direct: true,
  },
  { what: "no arguments (the tool's own error result)", body: call(3, { name: "echo_echo", _meta: envelope() }), name: "echo_echo", direct: true },
  {
    what: "a log line below the level asked for",
    body: call(4, { name: "echo_log", arguments: { message: "quiet", level: "debug" }, _meta: envelope({ "io.modelcontextprotocol/logLevel": "error" }) }),
    name: "echo_log",
    direct: true,
  },
  {
    what: "a log line at the level asked for (streamed)",
    body: call(5, { name: "echo_log", arguments: { message: "loud", level: "error" }, _meta: envelope({ "io.modelcontextprotocol/logLevel": "info" }) }),
    name: "echo_log",
  },
  {
    what: "progress (streamed)",
    body: call(6, { name: "echo_slow", arguments: { steps: 2, delayMs: 1 }, _meta: envelope({ progressToken: 7 }) }),
    name: "echo_slow",
  },
  { what: "an unknown tool", body: call(7, { name: "echo_nope", arguments: {}, _meta: envelope() }), name: "echo_nope" },
  {
    what: "a question the caller did not declare it can answer (-32021)",
    body: call(8, { name: "echo_sample", arguments: { prompt: "p" }, _meta: envelope() }),
    name: "echo_sample",
  },
  { what: "a hub tool", body: call(9, { name: "hub_status", arguments: {}, _meta: envelope() }), name: "hub_status", direct: true },
  {
    what: "an image (a result the SDK's schema reshapes is the SDK's to encode)",
    body: call(24, { name: "conformance_test_image_content", arguments: {}, _meta: envelope() }),
    name: "conformance_test_image_content",
  },
  {
    what: "mixed content",
    body: call(25, { name: "conformance_test_multiple_content_types", arguments: {}, _meta: envelope() }),
    name: "conformance_test_multiple_content_types",
  },
  {
    what: "a tool that fails (its error result)",
    body: call(26, { name: "conformance_test_error_handling", arguments: {}, _meta: envelope() }),
    name: "conformance_test_error_handling",
    direct: true,
  },
  // crafted requests: each must get the SDK's own refusal
  { what: "a name that is not a string", body: call(10, { name: 5, arguments: {}, _meta: envelope() }), name: "5" },
  { what: "arguments as an array", body: call(11, { name: "echo_echo", arguments: ["hi"], _meta: envelope() }), name: "echo_echo" },
  { what: "a fractional id", body: call(1.5, { name: "echo_echo", arguments: { text: "x" }, _meta: envelope() }), name: "echo_echo" },
  {
    what: "a fractional progress token",
    body: call(12, { name: "echo_echo", arguments: { text: "x" }, _meta: envelope({ progressToken: 1.5 }) }),
    name: "echo_echo",
  },
  {
    what: "a forged requestState",
    body: call(13, { name: "echo_echo", arguments: { text: "x" }, requestState: "forged", _meta: envelope() }),
    name: "echo_echo",
  },
  {
    what: "inputResponses nobody asked for",
    body: call(14, { name: "echo_echo", arguments: { text: "x" }, inputResponses: { a: {} }, _meta: envelope() }),
    name: "echo_echo",
  },
  { what: "an extra params key", body: call(15, { name: "echo_echo", arguments: { text: "x" }, task: {}, _meta: envelope() }), name: "echo_echo" },
  {
    what: "a malformed client capabilities",
    body: call(16, { name: "echo_echo", arguments: { text: "x" }, _meta: envelope({ "io.modelcontextprotocol/clientCapabilities": [] }) }),
    name: "echo_echo",
  },
  {
    what: "a malformed client info",
    body: call(17, { name: "echo_echo", arguments: { text: "x" }, _meta: envelope({ "io.modelcontextprotocol/clientInfo": "me" }) }),
    name: "echo_echo",
  },
  {
    what: "no Mcp-Method header",
    body: call(18, { name: "echo_echo", arguments: { text: "x" }, _meta: envelope() }),
    name: "echo_echo",
    headers: { "Mcp-Method": "" },
  },
  {
    what: "an Mcp-Method naming another method",
    body: call(19, { name: "echo_echo", arguments: { text: "x" }, _meta: envelope() }),
    name: "echo_echo",
    headers: { "Mcp-Method": "tools/list" },
  },
  {
    what: "no MCP-Protocol-Version header",
    body: call(20, { name: "echo_echo", arguments: { text: "x" }, _meta: envelope() }),
    name: "echo_echo",
    headers: { "MCP-Protocol-Version": "" },
  },
  {
    what: "an unsupported revision",
    body: call(21, { name: "echo_echo", arguments: { text: "x" }, _meta: envelope({ "io.modelcontextprotocol/protocolVersion": "2099-01-01" }) }),
    name: "echo_echo",
    headers: { "MCP-Protocol-Version": "2099-01-01" },
  },
  {
    what: "a JSON-RPC version other than 2.0",
    body: { ...call(22, { name: "echo_echo", arguments: { text: "x" }, _meta: envelope() }), jsonrpc: "1.0" },
    name: "echo_echo",
  },
  {
    what: "a text content type",
    body: call(23, { name: "echo_echo", arguments: { text: "x" }, _meta: envelope() }),
    name: "echo_echo",
    headers: { "Content-Type": "text/plain" },
  },
];

/** A reply with the hub's uptime masked: hub_status says it, and the two calls may fall on either side of a second. */
function timeless<T>(reply: T): T {
  return JSON.parse(
    JSON.stringify(reply)
      .replace(/up \d+ s/g, "up N s")
      .replace(/"uptimeSeconds":\d+/g, '"uptimeSeconds":0'),
  ) as T;
}

describe("the 2026-07-28 direct tools/call path answers as the SDK does", () => {
  let hub: TestHub;

  before(async () => {
    hub = await startHub({ servers: [], extraServers: { echo: fixture("echo-server"), conformance: fixture("conformance-server") } });
  });
  after(() => hub?.stop());

  for (const c of CASES) {
    test(c.what, async () => {
      const before = { direct: await directCalls(hub, "direct"), sdk: await directCalls(hub, "sdk") };
      const direct = await post(hub, c.body, { "Mcp-Name": c.name, ...c.headers });
      const middle = { direct: await directCalls(hub, "direct"), sdk: await directCalls(hub, "sdk") };
      const sdk = await post(hub, c.body, { "Mcp-Name": encoded(c.name), ...c.headers });
      const end = { direct: await directCalls(hub, "direct"), sdk: await directCalls(hub, "sdk") };
      assert.deepEqual(timeless(direct), timeless(sdk), `${c.what}: the direct path's reply differs from the SDK's`);
      // the encoded name always went the SDK's way, and the plain one the direct path's when it could
      assert.equal(end.direct, middle.direct, "an encoded Mcp-Name is the SDK's to decode");
      assert.equal(middle.direct - before.direct, c.direct ? 1 : 0, `${c.what}: answered directly?`);
      if (c.direct) assert.equal(direct.status, 200);
      void end.sdk;
    });
  }

  test("a call whose Mcp-Name names another tool is refused (-32020) and never run", async () => {
    const reply = await post(hub, call(30, { name: "echo_crash", arguments: {}, _meta: envelope() }), { "Mcp-Name": "echo_echo" });
    assert.equal(reply.status, 400);
    assert.equal((reply.messages[0] as { error?: { code: number } }).error?.code, -32020);
    // the crash tool would have ended the child: the echo tool still answers
    const after = await post(hub, call(31, { name: "echo_echo", arguments: { text: "alive" }, _meta: envelope() }), { "Mcp-Name": "echo_echo" });
    assert.equal((after.messages[0] as { result?: { content: Array<{ text: string }> } }).result?.content[0].text, "alive");
  });

  test("a client that hangs up mid-call cancels the call, as on the SDK's way", async () => {
    const cancelled = async () => {
      const reply = await post(hub, call(50, { name: "echo_stats", arguments: {}, _meta: envelope() }), { "Mcp-Name": "echo_stats" });
      const text = (reply.messages[0] as { result: { content: Array<{ text: string }> } }).result.content[0].text;
      return (JSON.parse(text) as { cancelledCalls: number }).cancelledCalls;
    };
    const before = await cancelled();
    const hangUp = new AbortController();
    const body = call(51, { name: "echo_slow", arguments: { steps: 1000, delayMs: 50 }, _meta: envelope() });
    const sent = fetch(hub.url, {
      method: "POST",
      headers: { "Content-Type": "application/json", "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "echo_slow" },
      body: JSON.stringify(body),
      signal: hangUp.signal,
    }).catch(() => undefined);
    await untilQueue(hub, "echo", { running: 1 });
    hangUp.abort();
    await sent;
    // 1000 steps of 50 ms would run for nearly a minute: the child hears the cancellation instead
    await until("the slow call to be cancelled", async () => (await cancelled()) > before);
  });

  test("a question the caller can answer comes back as input_required, and the retry completes the call", async () => {
    const caps = { "io.modelcontextprotocol/clientCapabilities": { sampling: {} } };
    const first = await post(hub, call(40, { name: "echo_sample", arguments: { prompt: "hi" }, _meta: envelope(caps) }), { "Mcp-Name": "echo_sample" });
    const result = (first.messages.at(-1) as { result: { resultType: string; inputRequests: Record<string, unknown>; requestState: string } }).result;
    assert.equal(result.resultType, "input_required", JSON.stringify(first));
    const [key] = Object.keys(result.inputRequests);
    const answer = { role: "assistant", content: { type: "text", text: "forty-two" }, model: "m" };
    const retry = await post(
      hub,
      call(41, {
        name: "echo_sample",
        arguments: { prompt: "hi" },
        inputResponses: { [key]: answer },
        requestState: result.requestState,
        _meta: envelope(caps),
      }),
      { "Mcp-Name": "echo_sample" },
    );
    const done = (retry.messages.at(-1) as { result: { content: Array<{ text: string }> } }).result;
    assert.equal(done.content[0].text, "model said: forty-two");
  });
});

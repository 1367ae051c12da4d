// The seam between the hub's two MCP SDKs (hub/protocol/sdk-seam.ts), method by method: what
// crosses unchanged, what is converted, and what a child, a client or the hub's own bug could put
// there that does not fit, each refused with a clear error instead of crossing under a cast.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Result, ServerRequest, Tool } from "@modelcontextprotocol/sdk/types.js";
import {
  inputRequestFor,
  isJsonValue,
  promptResult,
  relayedMethod,
  rootsAnswer,
  toolCallResult,
  toolFromV2,
  toolsForV2,
} from "../../../hub/protocol/sdk-seam.js";

const codeOf = (error: unknown) => (error as { code?: number }).code;

test("a JSON value is told from what is not one, at any depth, without recursion", () => {
  let deep: Record<string, unknown> = { leaf: "x" };
  for (let i = 0; i < 200_000; i++) deep = { next: deep };
  assert.equal(isJsonValue(deep), true);
  const shared = { type: "string" };
  assert.equal(isJsonValue({ a: shared, b: [shared, null, 1.5, true], gone: undefined }), true);
  for (const bad of [() => 1, Number.NaN, Infinity, Symbol("s"), 10n, new Date(), { nested: [new Map()] }, [undefined]]) {
    assert.equal(isJsonValue(bad), false, String(bad));
  }
});

test("tools/list for the v2 server: a tool whose schema is not JSON is left out, once, and the rest listed", () => {
  const fine: Tool = { name: "fine", inputSchema: { type: "object", properties: { path: { type: "string" } } } };
  const bug: Tool = { name: "bug", inputSchema: { type: "object", properties: { when: { default: new Date(0) } } } };
  const leftOut: string[] = [];
  assert.deepEqual(
    toolsForV2([fine, bug], (name) => leftOut.push(name)).map((t) => t.name),
    ["fine"],
  );
  assert.deepEqual(
    toolsForV2([fine, bug], (name) => leftOut.push(name)).map((t) => t.name),
    ["fine"],
  );
  assert.deepEqual(leftOut, ["bug"]);
});

test("a tool result crosses as it is; a contentless one as an empty one; anything else becomes an error result", () => {
  const result = { content: [{ type: "text", text: "ok" }], isError: false };
  assert.equal(toolCallResult(result, "t"), result);
  const task = { resultType: "task", taskId: "abc", status: "working" };
  assert.deepEqual(toolCallResult(task, "t"), { ...task, content: [] });
  for (const bad of [{ content: "text" }, { content: [], isError: "yes" }, { requestState: "forged" }, { inputRequests: {} }] as Result[]) {
    const answer = toolCallResult(bad, "the_tool");
    assert.equal(answer.isError, true, JSON.stringify(bad));
    assert.match(JSON.stringify(answer.content), /The tool 'the_tool' answered with something that is not a tool result/);
  }
});

test("a prompt is checked down to each message's content block", () => {
  const prompt = { messages: [{ role: "user", content: { type: "text", text: "hi" } }] };
  assert.equal(promptResult(prompt, "p"), prompt);
  for (const bad of [
    { messages: [{ role: "system", content: { type: "text", text: "hi" } }] },
    { messages: [{ role: "user", content: { type: "text" } }] },
    { messages: [{ role: "user", content: { type: "image", data: "AA==" } }] },
  ]) {
    assert.throws(
      () => promptResult(bad, "p"),
      (error: Error) => codeOf(error) === -32603 && /prompt 'p'/.test(error.message),
    );
  }
});

test("a child's question crosses in the revision's shape, or not at all", () => {
  const url: ServerRequest = { method: "elicitation/create", params: { mode: "url", message: "sign in", url: "https://example.com/", elicitationId: "e1" } };
  assert.deepEqual(inputRequestFor(url), { method: "elicitation/create", params: { message: "sign in", url: "https://example.com/", mode: "url" } });
  const sampling = (metadata: object): ServerRequest => ({ method: "sampling/createMessage", params: { messages: [], maxTokens: 5, metadata } });
  assert.deepEqual(inputRequestFor(sampling({ run: 1 }))?.params, { messages: [], maxTokens: 5, metadata: { run: 1 } });
  assert.equal(inputRequestFor(sampling({ when: new Date() })), undefined);
  assert.equal(inputRequestFor({ method: "ping" }), undefined);
});

test("the hub relays to a 2026 child only the methods a client sends a server", () => {
  assert.equal(relayedMethod("tools/call"), "tools/call");
  for (const method of ["initialize", "subscriptions/listen", "sampling/createMessage", "made/up", "__proto__"]) {
    assert.throws(
      () => relayedMethod(method),
      (error: Error) => codeOf(error) === -32601 && error.message.includes(method),
    );
  }
});

test("a 2026 child's tool: boolean property schemas in object form, an output schema rooted otherwise left out, no schema refused", () => {
  const notes: string[] = [];
  const tool = toolFromV2(
    {
      name: "loose",
      inputSchema: { type: "object", properties: { any: true, none: false, text: { type: "string" } } },
      outputSchema: { type: "array" },
    },
    "child",
    (why) => notes.push(why),
  );
  assert.deepEqual(tool.inputSchema.properties, { any: {}, none: { not: {} }, text: { type: "string" } });
  assert.equal(tool.outputSchema, undefined);
  assert.match(notes.join(), /outputSchema's root is not an object/);
  const kept = toolFromV2({ name: "typed", inputSchema: { type: "object" }, outputSchema: { type: "object", properties: { n: true } } }, "child", () => {
    throw new Error("nothing is left out of this one");
  });
  assert.deepEqual(kept.outputSchema, { type: "object", properties: { n: {} } });
  assert.throws(
    () => toolFromV2({ name: "bad", inputSchema: { type: "object", properties: { n: 5 } } }, "child", () => undefined),
    (error: Error) => codeOf(error) === -32602 && /'child' server listed tool 'bad', whose inputSchema property 'n' is not a JSON Schema/.test(error.message),
  );
});

test("a caller's answer to a 2025-era child's roots/list is checked before the child gets it", () => {
  const roots = { roots: [{ uri: "file:///workspace", name: "workspace" }] };
  assert.equal(rootsAnswer(roots), roots);
  for (const bad of [{ roots: "file:///" }, { roots: [{ name: "no uri" }] }, {}]) {
    assert.throws(
      () => rootsAnswer(bad),
      (error: Error) => codeOf(error) === -32602 && /roots\/list/.test(error.message),
    );
  }
});

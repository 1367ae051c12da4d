// The remembered classification (hub/modern/classify.ts) answers exactly as the SDK's classifier
// does: for every request below, first seen and seen again after its envelope was passed in
// another request, with the headers that agree and those that do not.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { classifyInboundRequest } from "@modelcontextprotocol/server";
import { modernRoute, sameJson } from "../../../hub/modern/classify.js";

const REVISION = "2026-07-28";
const META = {
  "io.modelcontextprotocol/protocolVersion": REVISION,
  "io.modelcontextprotocol/clientInfo": { name: "classify-test", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

const call = (overrides: Record<string, unknown> = {}, meta: Record<string, unknown> = META) => ({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "echo_echo", arguments: { text: "hi" }, _meta: meta },
  ...overrides,
});

function request(body: unknown, headers: Record<string, string> = {}, method = "POST"): Request {
  return new Request("http://127.0.0.1/mcp", { method, headers, ...(method === "POST" ? { body: JSON.stringify(body) } : {}) });
}

/** What the SDK's classifier says of the request, as modernRoute reports it (undefined for 2025 traffic). */
function sdkRoute(req: Request, body: unknown) {
  const route = classifyInboundRequest({
    httpMethod: req.method,
    protocolVersionHeader: req.headers.get("mcp-protocol-version") ?? undefined,
    mcpMethodHeader: req.headers.get("mcp-method") ?? undefined,
    mcpNameHeader: req.headers.get("mcp-name") ?? undefined,
    body,
  });
  return route.kind === "legacy" ? undefined : route;
}

const STANDARD = { "MCP-Protocol-Version": REVISION, "Mcp-Method": "tools/call", "Mcp-Name": "echo_echo" };

const CASES: Array<[string, unknown, Record<string, string>?, string?]> = [
  ["a plain call with its standard headers", call(), STANDARD],
  ["a plain call without headers", call()],
  ["headers with optional whitespace", call(), { "MCP-Protocol-Version": ` ${REVISION}\t`, "Mcp-Method": " tools/call " }],
  ["a version header naming another revision", call(), { ...STANDARD, "MCP-Protocol-Version": "2025-11-25" }],
  ["a version header naming an unknown revision", call(), { ...STANDARD, "MCP-Protocol-Version": "2099-01-01" }],
  ["an Mcp-Method header naming another method", call(), { ...STANDARD, "Mcp-Method": "tools/list" }],
  ["another method", call({ method: "tools/list", params: { _meta: META } }), { ...STANDARD, "Mcp-Method": "tools/list" }],
  ["a string id", call({ id: "abc" }), STANDARD],
  ["a fractional id", call({ id: 1.5 }), STANDARD],
  ["a null id", call({ id: null }), STANDARD],
  [
    "no id (a notification)",
    { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1, _meta: META } },
    { ...STANDARD, "Mcp-Method": "notifications/cancelled" },
  ],
  ["an extra key", call({ extra: true }), STANDARD],
  ["a result key (a response posted)", { jsonrpc: "2.0", id: 1, result: {}, params: { _meta: META } }, STANDARD],
  ["jsonrpc 1.0", call({ jsonrpc: "1.0" }), STANDARD],
  ["params an array", call({ params: [META] }), STANDARD],
  [
    "initialize carrying the envelope",
    call({ method: "initialize", params: { protocolVersion: REVISION, capabilities: {}, clientInfo: { name: "x", version: "1" }, _meta: META } }),
    STANDARD,
  ],
  ["a batch", [call(), call({ id: 2 })], STANDARD],
  ["GET", undefined, STANDARD, "GET"],
  ["an envelope without clientInfo", call({}, { ...META, "io.modelcontextprotocol/clientInfo": undefined }), STANDARD],
  ["an envelope with a bad clientInfo", call({}, { ...META, "io.modelcontextprotocol/clientInfo": { name: 7 } }), STANDARD],
  [
    "an envelope naming another version",
    call({}, { ...META, "io.modelcontextprotocol/protocolVersion": "2025-11-25" }),
    { ...STANDARD, "MCP-Protocol-Version": "2025-11-25" },
  ],
  ["an envelope with a progress token", call({}, { ...META, progressToken: "p1" }), STANDARD],
  ["an envelope with a bad progress token", call({}, { ...META, progressToken: { no: 1 } }), STANDARD],
];

describe("the remembered classification of 2026-07-28 requests", () => {
  test("answers every request as the SDK's classifier does, before and after the envelope is remembered", () => {
    for (let pass = 0; pass < 2; pass++) {
      for (const [what, rawBody, headers, method] of CASES) {
        // a body as the hub has it: parsed from the JSON the client sent
        const body = rawBody === undefined ? undefined : JSON.parse(JSON.stringify(rawBody));
        const req = request(body, headers, method);
        assert.deepEqual(modernRoute(req, body), sdkRoute(req, body), `${what} (pass ${pass + 1})`);
      }
    }
  });

  test("a remembered envelope is no pass for a request whose headers or body the classifier would refuse", () => {
    const body = call();
    assert.equal(modernRoute(request(body, STANDARD), body)?.kind, "modern");
    for (const [what, other, headers] of [
      ["a version header of another revision", call(), { ...STANDARD, "MCP-Protocol-Version": "2025-11-25" }],
      ["another Mcp-Method", call(), { ...STANDARD, "Mcp-Method": "prompts/get" }],
      ["an extra key", call({ extra: 1 }), STANDARD],
    ] as const) {
      const parsed = JSON.parse(JSON.stringify(other));
      const route = modernRoute(request(parsed, headers), parsed);
      assert.notEqual(route?.kind, "modern", what);
      assert.deepEqual(route, sdkRoute(request(parsed, headers), parsed), what);
    }
  });

  test("a client sending a new envelope with every request (or many clients) is answered as the SDK answers each", () => {
    // more clients than are remembered, and more envelopes per client: the memory is emptied or
    // rotated, never wrong, and an envelope seen again after its client's slots moved on is classified afresh
    for (let round = 0; round < 2; round++) {
      for (let client = 0; client < 300; client++) {
        for (const capabilities of [{}, { sampling: {} }, { roots: {} }, { elicitation: {} }, { sampling: {}, roots: {} }, {}]) {
          const meta = {
            ...META,
            "io.modelcontextprotocol/clientInfo": { name: `c${client % 150}`, version: "1" },
            "io.modelcontextprotocol/clientCapabilities": capabilities,
          };
          const body = JSON.parse(JSON.stringify(call({}, meta)));
          const req = request(body, STANDARD);
          assert.deepEqual(modernRoute(req, body), sdkRoute(req, body), `client ${client}, ${JSON.stringify(capabilities)}`);
        }
      }
    }
  });

  test("what is remembered is a copy: a request's envelope changed after it was classified is no pass for the next", () => {
    // a client of its own: nothing earlier remembered its envelope
    const own = { ...META, "io.modelcontextprotocol/clientInfo": { name: "copy-test", version: "1.0.0" } };
    const body = JSON.parse(JSON.stringify(call({}, own)));
    assert.equal(modernRoute(request(body, STANDARD), body)?.kind, "modern");
    // the request's own envelope goes on with it; were it what is remembered, this change would pass the next request's bad envelope
    const bad = { ...own, "io.modelcontextprotocol/clientCapabilities": "none" };
    body.params._meta["io.modelcontextprotocol/clientCapabilities"] = "none";
    const next = JSON.parse(JSON.stringify(call({}, bad)));
    const expected = sdkRoute(request(next, STANDARD), next);
    assert.notEqual(expected?.kind, "modern", "the classifier refuses capabilities that are not an object");
    assert.deepEqual(modernRoute(request(next, STANDARD), next), expected);
  });
});

describe("sameJson: equal exactly when the JSON of both is the same", () => {
  const cases: Array<[unknown, unknown]> = [
    [
      { a: 1, b: [1, { c: "x" }] },
      { a: 1, b: [1, { c: "x" }] },
    ],
    [
      { a: 1, b: 2 },
      { b: 2, a: 1 },
    ],
    [{ a: 1 }, { a: 1, b: 2 }],
    [{ a: [1, 2] }, { a: [1, 2, 3] }],
    [{ a: [] }, { a: {} }],
    [{ a: {} }, { a: [] }],
    [{ a: null }, { a: {} }],
    [{ a: "1" }, { a: 1 }],
    [{ a: true }, { a: "true" }],
    [{ "0": 1 }, [1]],
    [{ a: { b: { c: { d: 1 } } } }, { a: { b: { c: { d: 2 } } } }],
  ];
  test("agrees with comparing the two values' JSON", () => {
    for (const [a, b] of cases) {
      const [x, y] = [JSON.parse(JSON.stringify(a)), JSON.parse(JSON.stringify(b))];
      assert.equal(sameJson(x, y), JSON.stringify(x) === JSON.stringify(y), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
      assert.equal(sameJson(y, x), JSON.stringify(x) === JSON.stringify(y), `${JSON.stringify(b)} vs ${JSON.stringify(a)}`);
    }
  });
});

// A 2026-07-28 caller declares its capabilities per request: the child of its tools/call is told
// them (so it asks only what the caller can answer), and a child that asks for one the caller did
// not declare fails the whole call with -32021 naming it, HTTP 400, the revision's answer.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { fixture, startHub, type TestHub } from "../../helpers/hub.js";
import { envelope, postModern } from "./modern-client.js";

const declaring = (capabilities: Record<string, unknown>) => envelope({ "io.modelcontextprotocol/clientCapabilities": capabilities });
const toolCall = (name: string, capabilities: Record<string, unknown>) => ({
  id: 1,
  method: "tools/call",
  params: { name, arguments: {}, _meta: declaring(capabilities) },
});

type Asked = { resultType?: string; inputRequests?: Record<string, { method: string }>; content?: unknown };

describe("a 2026-07-28 caller's declared capabilities and its child's questions", () => {
  let hub: TestHub;

  before(async () => {
    hub = await startHub({ extraServers: { conformance: fixture("conformance-server") } });
  });
  after(() => hub?.stop());

  test("the child is told what the caller declared, and asks only that", async () => {
    const reply = await postModern(hub, toolCall("conformance_test_input_required_result_capabilities", { sampling: {} }));
    const result = reply.json?.result as Asked;
    assert.equal(result?.resultType, "input_required", reply.text);
    assert.deepEqual(
      Object.values(result.inputRequests ?? {}).map((r) => r.method),
      ["sampling/createMessage"],
      reply.text,
    );
  });

  test("a question the caller cannot answer fails the call: -32021 naming the capability, HTTP 400; the hub goes on serving", async () => {
    const reply = await postModern(hub, toolCall("conformance_test_missing_capability", { elicitation: { form: {} } }));
    assert.equal(reply.res.status, 400, reply.text);
    assert.equal(reply.json?.error?.code, -32021, reply.text);
    assert.deepEqual((reply.json?.error?.data as { requiredCapabilities?: unknown })?.requiredCapabilities, { sampling: {} }, reply.text);
    assert.match(reply.json?.error?.message ?? "", /sampling/);
    const next = await postModern(hub, toolCall("conformance_test_input_required_result_capabilities", { elicitation: { form: {} } }));
    assert.equal((next.json?.result as Asked)?.resultType, "input_required", next.text);
  });
});

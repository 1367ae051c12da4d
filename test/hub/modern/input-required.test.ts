// A child's question during a 2026-07-28 tools/call reaches the client as input_required and its
// answer goes back to the child, and the requestState naming the waiting call is the hub's seal:
// another tenant replaying it, a forged one and one already used reach no call.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { callModern, connectModern, envelope, postModern, samplingAnswer as answer, samplingCall, type ModernReply } from "./modern-client.js";

const KEY_A = `alice-${randomBytes(16).toString("hex")}`;
const KEY_B = `bob-${randomBytes(16).toString("hex")}`;
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

/** The first round of a sampling call: input_required with the child's request and the sealed state. */
async function firstRound(hub: TestHub, key: string): Promise<{ requestState: string; inputKey: string }> {
  const { json, text } = await postModern(hub, samplingCall(), auth(key));
  const result = json?.result as {
    resultType: string;
    requestState: string;
    inputRequests: Record<string, { method: string; params: { messages: unknown[] } }>;
  };
  assert.equal(result?.resultType, "input_required", text);
  const [inputKey, request] = Object.entries(result.inputRequests)[0];
  assert.equal(request.method, "sampling/createMessage");
  assert.match(JSON.stringify(request.params.messages), /who are you\?/);
  return { requestState: result.requestState, inputKey };
}

const retry = (hub: TestHub, key: string, requestState: string, inputKey: string, text: string): Promise<ModernReply> =>
  postModern(hub, samplingCall({ requestState, inputResponses: { [inputKey]: answer(text) } }), auth(key));

describe("a child's questions to a 2026-07-28 client", () => {
  let hub: TestHub;

  before(async () => {
    hub = await startHub({
      extraServers: { conformance: fixture("conformance-server") },
      config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } },
    });
  });
  after(() => hub?.stop());

  test("the v2 client answers sampling and elicitation through input_required, without noticing", async () => {
    const client = await connectModern(hub, { headers: auth(KEY_A), capabilities: { sampling: {}, elicitation: { form: {} } } });
    try {
      client.setRequestHandler("sampling/createMessage", async () => answer("a model") as never);
      client.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: { response: "yes please" } }) as never);
      assert.match(textOf(await callModern(client, "conformance_test_sampling", { prompt: "hi" })), /LLM response: a model/);
      assert.match(textOf(await callModern(client, "conformance_test_elicitation", { message: "go on?" })), /User response: .*yes please/);
    } finally {
      await client.close();
    }
  });

  test("bob replaying alice's requestState reaches no call; alice's answer still does", async () => {
    const { requestState, inputKey } = await firstRound(hub, KEY_A);
    const stolen = await retry(hub, KEY_B, requestState, inputKey, "bob's words in alice's model");
    assert.equal(stolen.json?.error?.code, -32602, stolen.text);
    assert.match(stolen.json?.error?.message ?? "", /requestState/);
    assert.doesNotMatch(stolen.text, /LLM response/);
    const own = await retry(hub, KEY_A, requestState, inputKey, "alice's model");
    assert.match(JSON.stringify(own.json?.result), /LLM response: alice's model/, own.text);
  });

  test("a forged requestState, and one already used, reach no call", async () => {
    const { requestState, inputKey } = await firstRound(hub, KEY_A);
    const flipped = requestState.slice(0, -2) + (requestState.endsWith("AA") ? "BB" : "AA");
    const forged = await retry(hub, KEY_A, flipped, inputKey, "forged");
    assert.equal(forged.json?.error?.code, -32602, forged.text);
    const done = await retry(hub, KEY_A, requestState, inputKey, "first answer");
    assert.match(JSON.stringify(done.json?.result), /LLM response: first answer/, done.text);
    const replayed = await retry(hub, KEY_A, requestState, inputKey, "second answer");
    assert.equal(replayed.json?.error?.code, -32602, replayed.text);
    assert.match(replayed.json?.error?.message ?? "", /names no call waiting/);
  });

  test("a prompt's question while another call waits for its retry is the prompt's own input_required, never handed to that call", async () => {
    // alice's sampling call now waits (up to the state's lifetime) for a retry that does not come yet
    const waiting = await firstRound(hub, KEY_A);
    const withElicitation = envelope({ "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } } });
    const promptGet = (extra: Record<string, unknown> = {}) =>
      postModern(
        hub,
        { id: 2, method: "prompts/get", params: { name: "conformance_test_input_required_result_prompt", _meta: withElicitation, ...extra } },
        auth(KEY_A),
      );
    // bounded: the hang this guards against lasted until the child's own request timeout
    let timer: NodeJS.Timeout | undefined;
    const unanswered = new Promise<"unanswered">((resolve) => (timer = setTimeout(() => resolve("unanswered"), 8000)));
    const reply = await Promise.race([promptGet(), unanswered]).finally(() => clearTimeout(timer));
    assert.notEqual(reply, "unanswered", "prompts/get went unanswered: its child's question went to the waiting tools/call");
    const { json, text } = reply as ModernReply;
    const asked = json?.result as { resultType: string; requestState: string; inputRequests: Record<string, { method: string }> };
    assert.equal(asked?.resultType, "input_required", text);
    assert.deepEqual(Object.keys(asked.inputRequests), ["user_context"]);
    const prompt = await promptGet({ requestState: asked.requestState, inputResponses: { user_context: { action: "accept", content: { context: "notes" } } } });
    assert.match(JSON.stringify(prompt.json?.result), /Use this context: notes/, prompt.text);
    // the waiting call was not asked the prompt's question: its retry still gets its own answer
    const own = await retry(hub, KEY_A, waiting.requestState, waiting.inputKey, "still mine");
    assert.match(JSON.stringify(own.json?.result), /LLM response: still mine/, own.text);
  });
});

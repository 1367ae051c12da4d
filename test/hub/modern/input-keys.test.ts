// The keys a 2026-07-28 client answers a child's questions under are the child's own names (its
// _meta["agentbox/inputKey"] hint), the hint itself reaches no client of either era, and a first
// call that brings its answers already is answered from them, under the child's key only.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { INPUT_KEY_META_KEY, SESSION_META_KEY } from "../../../servers/lib/session-events.js";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { envelope, postModern } from "./modern-client.js";

const TOOL = "conformance_test_input_required_result_elicitation";
const withElicitation = envelope({ "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } } });
const accept = (name: string) => ({ action: "accept", content: { name } });
const elicitationCall = (extra: Record<string, unknown> = {}) => ({
  id: 1,
  method: "tools/call",
  params: { name: TOOL, arguments: {}, _meta: withElicitation, ...extra },
});

type Asked = { resultType?: string; requestState?: string; inputRequests?: Record<string, { method: string; params: { _meta?: Record<string, unknown> } }> };

describe("the keys of a child's questions to a 2026-07-28 client", () => {
  let hub: TestHub;

  before(async () => {
    hub = await startHub({ extraServers: { conformance: fixture("conformance-server") } });
  });
  after(() => hub?.stop());

  test("a question is keyed by the child's name for it, and the hub's own _meta keys stay with the hub", async () => {
    const first = await postModern(hub, elicitationCall());
    const asked = first.json?.result as Asked;
    assert.equal(asked?.resultType, "input_required", first.text);
    assert.deepEqual(Object.keys(asked.inputRequests ?? {}), ["user_name"], first.text);
    const meta = asked.inputRequests?.user_name.params._meta ?? {};
    assert.equal(meta[INPUT_KEY_META_KEY], undefined, first.text);
    assert.equal(meta[SESSION_META_KEY], undefined, first.text);
    const done = await postModern(hub, elicitationCall({ requestState: asked.requestState, inputResponses: { user_name: accept("Alice") } }));
    assert.match(JSON.stringify(done.json?.result), /Alice/, done.text);
  });

  test("a first call that brings its answer is answered from it, extra keys ignored", async () => {
    const inputResponses = { user_name: accept("Bob"), unknown_extra_key: accept("Mallory") };
    const reply = await postModern(hub, elicitationCall({ inputResponses }));
    const result = reply.json?.result as Asked & { content?: unknown };
    assert.notEqual(result?.resultType, "input_required", reply.text);
    assert.match(JSON.stringify(result.content), /Bob/, reply.text);
    assert.doesNotMatch(reply.text, /Mallory/);
  });

  test("answers under keys the child did not ask, or inherited ones, answer nothing: the question is asked", async () => {
    const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${TOOL}","arguments":{},"_meta":${JSON.stringify(withElicitation)},"inputResponses":{"__proto__":{"action":"accept","content":{"name":"Mallory"}},"elicitation-1":{"action":"accept","content":{"name":"Mallory"}}}}}`;
    const reply = await postModern(hub, JSON.parse(body) as Record<string, unknown>);
    const result = reply.json?.result as Asked;
    assert.equal(result?.resultType, "input_required", reply.text);
    assert.deepEqual(Object.keys(result.inputRequests ?? {}), ["user_name"], reply.text);
    assert.doesNotMatch(reply.text, /Mallory/);
  });

  test("a 2025 client's elicitation carries neither the hint nor the session", async () => {
    const client = await hub.connect({ capabilities: { elicitation: { form: {} } } });
    try {
      let seen: Record<string, unknown> | undefined;
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        seen = (request.params._meta ?? {}) as Record<string, unknown>;
        return accept("Carol");
      });
      assert.match(textOf(await call(client, TOOL)), /Carol/);
      assert.ok(seen, "the client was asked");
      assert.equal(seen[INPUT_KEY_META_KEY], undefined, JSON.stringify(seen));
      assert.equal(seen[SESSION_META_KEY], undefined, JSON.stringify(seen));
    } finally {
      await client.close();
    }
  });

  test("every round has a fresh requestState, and an earlier round's state reaches the call no more", async () => {
    const multi = (extra: Record<string, unknown> = {}) => ({
      ...elicitationCall(extra),
      params: { ...elicitationCall(extra).params, name: "conformance_test_input_required_result_multi_round" },
    });
    const r1 = (await postModern(hub, multi())).json?.result as Asked;
    assert.deepEqual(Object.keys(r1?.inputRequests ?? {}), ["step1"], JSON.stringify(r1));
    const r2reply = await postModern(hub, multi({ requestState: r1.requestState, inputResponses: { step1: accept("Dana") } }));
    const r2 = r2reply.json?.result as Asked;
    assert.deepEqual(Object.keys(r2?.inputRequests ?? {}), ["step2"], r2reply.text);
    assert.notEqual(r2.requestState, r1.requestState);
    // round 1's state, replayed with a forged answer to round 2's question, is refused
    const replayed = await postModern(
      hub,
      multi({ requestState: r1.requestState, inputResponses: { step2: { action: "accept", content: { color: "forged" } } } }),
    );
    assert.equal(replayed.json?.error?.code, -32602, replayed.text);
    assert.match(replayed.json?.error?.message ?? "", /earlier round/);
    const r3 = await postModern(hub, multi({ requestState: r2.requestState, inputResponses: { step2: { action: "accept", content: { color: "blue" } } } }));
    assert.match(JSON.stringify(r3.json?.result), /Dana likes blue/, r3.text);
    assert.doesNotMatch(r3.text, /forged/);
  });
});

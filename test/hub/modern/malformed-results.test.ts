// A child's answer that is not what its method returns (a buggy or hostile server; the fixture
// writes raw JSON-RPC, so no SDK of its own checks it) reaches a 2026-07-28 client as a clear
// error naming what was wrong (hub/protocol/sdk-seam.ts), never as a result of another shape
// passed on as if it were one; the hub keeps serving.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { fixture, startHub, type TestHub } from "../../helpers/hub.js";
import { envelope, postModern } from "./modern-client.js";

describe("a child's malformed answers, to a 2026-07-28 client", () => {
  let hub: TestHub;
  before(async () => {
    hub = await startHub({ servers: [], extraServers: { malformed: fixture("malformed-results-server") } });
  });
  after(() => hub?.stop());

  const request = (id: number, method: string, params: Record<string, unknown>) => postModern(hub, { id, method, params: { ...params, _meta: envelope() } });

  test("a prompt that is no prompt is a -32603 naming the prompt and what it lacked", async () => {
    const { json } = await request(1, "prompts/get", { name: "malformed_broken" });
    assert.equal(json?.result, undefined, JSON.stringify(json));
    assert.equal(json?.error?.code, -32603);
    assert.match(json.error.message, /prompt 'malformed_broken' answered prompts\/get with something that is not a prompt/);
  });

  test("resource contents without text or blob are a -32603 naming the resource", async () => {
    const { json } = await request(2, "resources/read", { uri: "malformed://notes" });
    assert.equal(json?.result, undefined, JSON.stringify(json));
    assert.equal(json?.error?.code, -32603);
    assert.match(json.error.message, /resource 'malformed:\/\/notes' answered resources\/read with something that is not a resource's contents/);
  });

  test("a completion of numbers is a -32603 naming the prompt", async () => {
    const { json } = await request(3, "completion/complete", { ref: { type: "ref/prompt", name: "malformed_broken" }, argument: { name: "x", value: "" } });
    assert.equal(json?.result, undefined, JSON.stringify(json));
    assert.equal(json?.error?.code, -32603);
    assert.match(json.error.message, /prompt 'malformed_broken' answered completion\/complete with something that is not a completion/);
  });

  test("a tool result whose content is no list is an error result the model can read, and the next call is answered", async () => {
    const broken = await request(4, "tools/call", { name: "malformed_broken", arguments: {} });
    assert.equal(broken.json?.error, undefined, broken.text);
    assert.equal(broken.json?.result?.isError, true);
    assert.match(JSON.stringify(broken.json?.result?.content), /The tool 'malformed_broken' answered with something that is not a tool result/);
    const fine = await request(5, "tools/call", { name: "malformed_fine", arguments: {} });
    assert.deepEqual(fine.json?.result?.content, [{ type: "text", text: "fine" }]);
  });
});

// The rounds of a 2026-07-28 request whose child asks: the questions a child asks in one go reach
// the client in one input_required (however many reads of the child's output they took), a retry
// answering some gets the rest asked again, prompts/get and resources/read ask the way tools/call
// does, and a requestState names one method, one tool, prompt or resource, and one tenant.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { fixture, startHub, type TestHub } from "../../helpers/hub.js";
import { connectModern, envelope, postModern, type ModernReply } from "./modern-client.js";

const KEY_A = `alice-${randomBytes(16).toString("hex")}`;
const KEY_B = `bob-${randomBytes(16).toString("hex")}`;
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });
const GREETING_URI = "asking://greeting";
const ALL_THREE = ["client_roots", "greeting", "user_name"];

const declaring = envelope({ "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} }, sampling: {}, roots: {} } });
const ANSWERS: Record<string, unknown> = {
  user_name: { action: "accept", content: { name: "Ada" } },
  user_context: { action: "accept", content: { context: "the lab notes" } },
  greeting: { role: "assistant", content: { type: "text", text: "Good morning" }, model: "test-model" },
  client_roots: { roots: [{ uri: "file:///ada", name: "ada" }] },
};
const answersFor = (keys: string[]) => Object.fromEntries(keys.map((key) => [key, ANSWERS[key]]));

interface InputRequired {
  resultType: string;
  requestState: string;
  inputRequests: Record<string, { method: string; params: Record<string, unknown> }>;
}

type Request = { method: string; params: Record<string, unknown> };
const askThree = (padding: number): Request => ({ method: "tools/call", params: { name: "asking_ask_three", arguments: { padding } } });
const askingPrompt: Request = { method: "prompts/get", params: { name: "asking_asks_first" } };
const askingResource: Request = { method: "resources/read", params: { uri: GREETING_URI } };

let nextId = 1;
function send(hub: TestHub, key: string, request: Request, retry: Record<string, unknown> = {}): Promise<ModernReply> {
  return postModern(hub, { id: nextId++, method: request.method, params: { ...request.params, _meta: declaring, ...retry } }, auth(key));
}

function inputRequired(reply: ModernReply): InputRequired {
  const result = reply.json?.result as InputRequired | undefined;
  assert.equal(result?.resultType, "input_required", reply.text);
  return result;
}

/** A retry's refusal: the state reaches no waiting request, and nothing of a result comes back. */
function refused(reply: ModernReply): void {
  assert.equal(reply.json?.error?.code, -32602, reply.text);
  assert.match(reply.json.error.message, /requestState/);
  assert.equal(reply.json.result, undefined);
}

describe("a 2026-07-28 request's rounds of questions", () => {
  let hub: TestHub;

  before(async () => {
    hub = await startHub({
      extraServers: {
        asking: fixture("asking-server"),
        mute: { ...fixture("asking-server"), env: { ASKING_IGNORES_PINGS: "1" } },
      },
      config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } },
    });
  });
  after(() => hub?.stop());

  test("three questions a child asks in one go come in one input_required, every time, however many reads they span", async () => {
    for (let i = 0; i < 20; i++) {
      // every other call's questions are 256 KiB each: one burst then takes many reads of the child's output
      const padding = i % 2 ? 256 * 1024 : 0;
      const first = inputRequired(await send(hub, KEY_A, askThree(padding)));
      assert.deepEqual(Object.keys(first.inputRequests).sort(), ALL_THREE, `call ${i} (padding ${padding}) asked only some at once`);
      assert.deepEqual(
        Object.values(first.inputRequests)
          .map((r) => r.method)
          .sort(),
        ["elicitation/create", "roots/list", "sampling/createMessage"],
      );
      const done = await send(hub, KEY_A, askThree(padding), { requestState: first.requestState, inputResponses: answersFor(ALL_THREE) });
      assert.match(JSON.stringify(done.json?.result), /name=Ada, greeting=Good morning, roots=file:\/\/\/ada/, done.text);
    }
  });

  test("a child that never answers a ping still has its questions asked, and its call completes", async () => {
    const muteThree: Request = { method: "tools/call", params: { name: "mute_ask_three", arguments: {} } };
    // bounded: without a bound on the wait for the child's ping, this round would never be answered
    let timer: NodeJS.Timeout | undefined;
    const unanswered = new Promise<"unanswered">((resolve) => (timer = setTimeout(() => resolve("unanswered"), 15_000)));
    const reply = await Promise.race([send(hub, KEY_A, muteThree), unanswered]).finally(() => clearTimeout(timer));
    assert.notEqual(reply, "unanswered", "the round waited on a ping the child never answers");
    const first = inputRequired(reply as ModernReply);
    assert.ok(Object.keys(first.inputRequests).length > 0);
    let state = first.requestState;
    let asked = Object.keys(first.inputRequests);
    // whatever the round carried is answered; anything it did not carry comes in the next
    for (let round = 0; round < 3; round++) {
      const next = await send(hub, KEY_A, muteThree, { requestState: state, inputResponses: answersFor(asked) });
      const result = next.json?.result as Partial<InputRequired> | undefined;
      if (result?.resultType !== "input_required") {
        assert.match(JSON.stringify(result), /name=Ada, greeting=Good morning, roots=file:\/\/\/ada/, next.text);
        return;
      }
      ({ requestState: state } = result as InputRequired);
      asked = Object.keys(result.inputRequests ?? {});
    }
    assert.fail("the call did not complete within three retries");
  });

  test("a retry answering two of three questions gets the third asked again; answering it completes the call", async () => {
    const first = inputRequired(await send(hub, KEY_A, askThree(0)));
    assert.deepEqual(Object.keys(first.inputRequests).sort(), ALL_THREE);
    const partial = await send(hub, KEY_A, askThree(0), { requestState: first.requestState, inputResponses: answersFor(["user_name", "greeting"]) });
    const second = inputRequired(partial);
    assert.deepEqual(Object.keys(second.inputRequests), ["client_roots"]);
    assert.equal(second.inputRequests.client_roots.method, "roots/list");
    const done = await send(hub, KEY_A, askThree(0), { requestState: second.requestState, inputResponses: answersFor(["client_roots"]) });
    assert.match(JSON.stringify(done.json?.result), /name=Ada, greeting=Good morning, roots=file:\/\/\/ada/, done.text);
  });

  test("a child's elicitation during a prompts/get or a resources/read reaches the v2 client, and the request completes", async () => {
    const client = await connectModern(hub, { headers: auth(KEY_A), capabilities: { elicitation: { form: {} } } });
    try {
      const asked: string[] = [];
      client.setRequestHandler("elicitation/create", async (request) => {
        asked.push(String((request.params as { message?: string }).message));
        const field = Object.keys((request.params as { requestedSchema: { properties: object } }).requestedSchema.properties)[0];
        return { action: "accept", content: { [field]: field === "context" ? "the lab notes" : "Ada" } } as never;
      });
      const prompt = await client.getPrompt({ name: "asking_asks_first" });
      assert.match(JSON.stringify(prompt.messages), /Use this context: the lab notes/);
      // two servers offer resources here: the hub knows which owns the URI once they are listed
      assert.ok((await client.listResources()).resources.some((r) => r.uri === GREETING_URI));
      const resource = await client.readResource({ uri: GREETING_URI });
      assert.match(JSON.stringify(resource.contents), /Hello, Ada!/);
      assert.deepEqual(asked, ["What context should the prompt use?", "Whom should the greeting greet?"]);
    } finally {
      await client.close();
    }
  });

  test("a requestState reaches only the method, the prompt or tool, and the tenant it was given for", async () => {
    const prompt = inputRequired(await send(hub, KEY_A, askingPrompt));
    assert.deepEqual(Object.keys(prompt.inputRequests), ["user_context"]);
    const tool = inputRequired(await send(hub, KEY_A, askThree(0)));
    const promptAnswers = { requestState: prompt.requestState, inputResponses: answersFor(["user_context", ...ALL_THREE]) };
    const toolAnswers = { requestState: tool.requestState, inputResponses: answersFor(["user_context", ...ALL_THREE]) };

    refused(await send(hub, KEY_A, askThree(0), promptAnswers));
    refused(await send(hub, KEY_A, askingResource, promptAnswers));
    refused(await send(hub, KEY_A, { method: "prompts/get", params: { name: "asking_plain" } }, promptAnswers));
    refused(await send(hub, KEY_A, askingPrompt, toolAnswers));
    refused(await send(hub, KEY_B, askingPrompt, promptAnswers));
    refused(await send(hub, KEY_B, askThree(0), toolAnswers));

    // none of those reached (or used up) the waiting requests: their own retries complete them
    const promptDone = await send(hub, KEY_A, askingPrompt, promptAnswers);
    assert.match(JSON.stringify(promptDone.json?.result), /Use this context: the lab notes/, promptDone.text);
    const toolDone = await send(hub, KEY_A, askThree(0), toolAnswers);
    assert.match(JSON.stringify(toolDone.json?.result), /name=Ada, greeting=Good morning/, toolDone.text);
  });
});

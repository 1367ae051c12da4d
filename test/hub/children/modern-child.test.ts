// A child that speaks only MCP 2026-07-28 (`"protocol": "2026-07-28"` in its config): the hub
// reaches it with the SDK v2 client, lists and calls it like any other, hears its list changes, and
// carries its input_required questions to the client whose call it is: a 2026 caller as an
// input_required of the hub's own, a 2025 caller as an ordinary elicitation request. The child's
// requestState stays with the hub; a caller without the capability gets a clear error; two
// callers at once each get their own question.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ElicitRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { call, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";
import { startModernChild, type ModernChild } from "../../fixtures/modern-child-server.js";
import { callModern, connectModern } from "../modern/modern-client.js";

type Elicit = { params: { message: string } };
const greetingOf = (request: Elicit) => request.params.message.split(":")[0];

describe("a child speaking only 2026-07-28", () => {
  let child: ModernChild;
  let hub: TestHub;
  const closing: Array<{ close(): Promise<void> }> = [];

  before(async () => {
    child = await startModernChild();
    hub = await startHub({ extraServers: { modern: { url: child.url, protocol: "2026-07-28" }, auto: { url: child.url, protocol: "auto" } } });
  });
  after(async () => {
    await Promise.allSettled(closing.map((c) => c.close()));
    await hub?.stop();
    await child?.close();
  });

  test("is listed and called like any other child, and its list changes reach the hub", { timeout: 60_000 }, async () => {
    const client = await hub.connect();
    closing.push(client);
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes("modern_add") && names.includes("modern_ask_name"), names.join(", "));
    assert.equal(textOf(await call(client, "modern_add", { a: 2, b: 3 })), "5");
    // the hub names the session and the call to it, as to any child
    assert.equal(typeof child.metas.at(-1)?.["agentbox/session"], "string", JSON.stringify(child.metas.at(-1)));
    child.addTool();
    await until("the new tool to be listed", async () => (await client.listTools()).tools.some((t) => t.name === "modern_extra"));
  });

  test("a 2025 client is asked the child's question as an elicitation request, and the child's state is held by the hub", { timeout: 60_000 }, async () => {
    const client = await hub.connect({ capabilities: { elicitation: {} } });
    closing.push(client);
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: "accept", content: { name: "Ada" } };
    });
    const text = textOf(await call(client, "modern_ask_name", { greeting: "hello" }));
    assert.deepEqual(asked, ["hello: who are you?"]);
    assert.match(text, /^hello, Ada \(state child-state-/);
    const state = /state (child-state-[^)]+)/.exec(text)![1];
    assert.equal(child.states.get(state), true, "the child got its own state back on the retry");
  });

  test("a 2026 client is asked it as an input_required of the hub's, never seeing the child's state", { timeout: 60_000 }, async () => {
    const client = await connectModern(hub, { capabilities: { elicitation: { form: {} } } });
    closing.push(client);
    const asked: string[] = [];
    client.setRequestHandler("elicitation/create", (async (request: Elicit) => {
      asked.push(request.params.message);
      return { action: "accept", content: { name: "Grace" } };
    }) as never);
    const result = await callModern(client, "modern_ask_name", { greeting: "hi" });
    assert.deepEqual(asked, ["hi: who are you?"]);
    assert.match(textOf(result), /^hi, Grace \(state child-state-/);
  });

  test("the child's state never reaches a 2026 client: its round carries the hub's sealed state", { timeout: 60_000 }, async () => {
    const client = await connectModern(hub, { capabilities: { elicitation: { form: {} } } });
    closing.push(client);
    const round = (await client.request(
      { method: "tools/call", params: { name: "modern_ask_name", arguments: { greeting: "yo" } } } as never,
      {
        allowInputRequired: true,
      } as never,
    )) as { resultType?: string; requestState?: string; inputRequests?: Record<string, unknown> };
    assert.equal(round.resultType, "input_required");
    assert.ok(round.inputRequests && Object.keys(round.inputRequests).length === 1, JSON.stringify(round));
    assert.ok(round.requestState && !round.requestState.includes("child-state-"), "the hub's own state, not the child's");
  });

  test("a caller that cannot be asked gets an error that says what is missing", { timeout: 60_000 }, async () => {
    const legacy = await hub.connect();
    closing.push(legacy);
    const result = (await legacy.callTool({ name: "modern_ask_name", arguments: { greeting: "hey" } }).catch((err: Error) => err)) as CallToolResult | Error;
    const said = result instanceof Error ? result.message : textOf(result);
    // the child sees that its caller declared nothing, and its SDK refuses to ask
    assert.match(said, /Cannot request input 'who' \(elicitation\/create\): the request's client capabilities do not declare the required capability/);

    const modern = await connectModern(hub);
    closing.push(modern);
    const failure = await callModern(modern, "modern_ask_name", { greeting: "hey" }).then(
      (r) => textOf(r),
      (err: Error) => err.message,
    );
    assert.match(failure, /Cannot request input 'who' \(elicitation\/create\): the request's client capabilities do not declare the required capability/);
  });

  test("a tool whose schemas only the revision takes is listed to clients of both eras, its output schema left out", { timeout: 60_000 }, async () => {
    // passed on as the child wrote them, its boolean property and array-rooted output schema fail a 2025 client's whole tools/list
    const client = await hub.connect();
    closing.push(client);
    const listed = (await client.listTools()).tools.find((t) => t.name === "modern_loose");
    assert.deepEqual(listed?.inputSchema.properties, { anything: {} });
    assert.equal(listed?.outputSchema, undefined);
    const modern = await connectModern(hub);
    closing.push(modern);
    const seen = (await modern.listTools()).tools.find((t) => t.name === "modern_loose");
    assert.deepEqual(seen?.inputSchema.properties, { anything: {} });
    assert.equal(textOf(await callModern(modern, "modern_loose")), "loose");
    assert.ok(
      hub.logs.some((line) => line.includes("part of a listed tool is left out") && line.includes("loose") && line.includes("outputSchema")),
      hub.logs.join("\n"),
    );
  });

  test('"auto" finds the 2026-07-28 era the child offers', { timeout: 60_000 }, async () => {
    const client = await hub.connect();
    closing.push(client);
    assert.equal(textOf(await call(client, "auto_add", { a: 40, b: 2 })), "42");
  });

  test("a prompt that asks reaches its 2025 and its 2026 caller", { timeout: 60_000 }, async () => {
    const legacy = await hub.connect({ capabilities: { elicitation: {} } });
    closing.push(legacy);
    legacy.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { name: "Ada" } }));
    const text = (r: { messages: Array<{ content: unknown }> }) => (r.messages[0].content as { text: string }).text;
    assert.equal(text(await legacy.getPrompt({ name: "modern_greet", arguments: { greeting: "hello" } })), "hello, Ada");
    const modern = await connectModern(hub, { capabilities: { elicitation: { form: {} } } });
    closing.push(modern);
    modern.setRequestHandler("elicitation/create", (async () => ({ action: "accept", content: { name: "Grace" } })) as never);
    assert.equal(text(await modern.getPrompt({ name: "modern_greet", arguments: { greeting: "hi" } })), "hi, Grace");
  });

  test("a child naming another session's call in its question asks only the caller whose call it answers", { timeout: 60_000 }, async () => {
    let forgedDone = false;
    const victim = await hub.connect({ capabilities: { elicitation: {} } });
    closing.push(victim);
    const victimAsked: string[] = [];
    victim.setRequestHandler(ElicitRequestSchema, async (request) => {
      victimAsked.push(request.params.message);
      // a regression asks the victim the forged question: answered at once, so the test fails rather than hangs
      if (!request.params.message.startsWith("forged")) await until("the forged call to end", () => forgedDone);
      return { action: "accept", content: { name: "victim" } };
    });
    const before = child.metas.length;
    const victimCall = call(victim, "modern_ask_name", { greeting: "mine" });
    await until("the victim's question to be out", () => victimAsked.length > 0);
    const named = child.metas.slice(before)[0] as Record<string, string>;

    const attacker = await hub.connect({ capabilities: { elicitation: {} } });
    closing.push(attacker);
    const attackerAsked: string[] = [];
    attacker.setRequestHandler(ElicitRequestSchema, async (request) => {
      attackerAsked.push(request.params.message);
      return { action: "accept", content: { name: "attacker" } };
    });
    const forged = await call(attacker, "modern_ask_forged", { session: named["agentbox/session"], call: named["agentbox/call"] });
    forgedDone = true;
    assert.equal(textOf(forged), "answered by attacker");
    assert.deepEqual(attackerAsked, ["forged: who are you?"]);
    assert.match(textOf(await victimCall), /^mine, victim/);
    assert.deepEqual(victimAsked, ["mine: who are you?"]);
  });

  test("a child that asks for input round after round is given up on with the reason, and the hub keeps serving", { timeout: 60_000 }, async () => {
    const client = await hub.connect();
    closing.push(client);
    const said = await client.callTool({ name: "modern_endless", arguments: {} }).then(
      (r) => textOf(r as CallToolResult),
      (err: Error) => err.message,
    );
    assert.match(said, /still asked for input after 10 rounds/);
    assert.equal(textOf(await call(client, "modern_add", { a: 1, b: 1 })), "2");
  });

  test("two clients calling at once each answer their own question", { timeout: 60_000 }, async () => {
    const asked = new Map<string, string>();
    const both = () => asked.size === 2;
    const modern = async (who: string) => {
      const client = await connectModern(hub, { capabilities: { elicitation: { form: {} } } });
      closing.push(client);
      client.setRequestHandler("elicitation/create", (async (request: Elicit) => {
        asked.set(who, greetingOf(request));
        await until("both questions to be out", both);
        return { action: "accept", content: { name: who } };
      }) as never);
      return callModern(client, "modern_ask_name", { greeting: `greeting-${who}` });
    };
    const legacy = async (who: string) => {
      const client = await hub.connect({ capabilities: { elicitation: {} } });
      closing.push(client);
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        asked.set(who, greetingOf(request as Elicit));
        await until("both questions to be out", both);
        return { action: "accept", content: { name: who } };
      });
      return call(client, "modern_ask_name", { greeting: `greeting-${who}` });
    };
    for (const pair of [() => [modern("m1"), modern("m2")], () => [legacy("l1"), legacy("l2")]]) {
      const [a, b] = await Promise.all(pair());
      const whoAsked = [...asked.keys()];
      assert.deepEqual([...asked.entries()].sort(), whoAsked.map((who) => [who, `greeting-${who}`]).sort());
      assert.deepEqual([textOf(a), textOf(b)].map((t) => t.split(" (")[0]).sort(), whoAsked.map((who) => `greeting-${who}, ${who}`).sort());
      asked.clear();
    }
  });
});

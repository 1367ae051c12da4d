// A plain SDK v1 server (it cannot echo the hub's _meta["agentbox/call"]) asking mid-call while two
// clients call it: once it has asked without naming its call, the hub runs one client's calls to it
// at a time, so each question has one client to go to, exactly, in both eras (two 2025 sessions, two
// 2026-07-28 clients sharing their tenant's context). The second client's call waits its turn; a
// waiting call still ends when its client cancels it.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { Client as ModernClient } from "@modelcontextprotocol/client";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, CreateMessageRequestSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { queueOf, until, untilQueue } from "../../helpers/wait.js";
import { callModern, connectModern } from "../modern/modern-client.js";

const KEY = `tenant-${randomUUID()}`;
const auth = { Authorization: `Bearer ${KEY}` };
type Tool = "plain_elicit" | "plain_sample";

/** What each client was asked; a client answers its first question only once the other client's call waits its turn, or was asked already. */
class Askers {
  readonly asked = new Map<string, string[]>();
  constructor(private readonly hub: TestHub) {}

  async question(who: string, text: string): Promise<void> {
    const mine = this.asked.get(who) ?? [];
    mine.push(text);
    this.asked.set(who, mine);
    // both calls were made at once: the first asked holds the server while the other's call waits its turn
    const othersAsked = () => [...this.asked.keys()].some((other) => other !== who);
    await until(`${who}'s question to be out while the other call waits`, async () => othersAsked() || (await queueOf(this.hub, "plain", KEY)).queued > 0);
  }
}

const elicitation = (who: string) => ({ action: "accept" as const, content: { answer: `${who}'s answer` } });
const sampling = (who: string) => ({ role: "assistant" as const, content: { type: "text" as const, text: `${who}'s model` }, model: who });
const expected = (tool: Tool, prompt: string, who: string) =>
  tool === "plain_elicit" ? `${prompt} -> accept {"answer":"${who}'s answer"}` : `${prompt} -> ${who}'s model`;

async function legacyAsker(hub: TestHub, askers: Askers, who: string): Promise<Client> {
  const client = await hub.connect({ name: who, capabilities: { elicitation: {}, sampling: {} }, headers: auth });
  client.setRequestHandler(ElicitRequestSchema, async (request) => (await askers.question(who, request.params.message), elicitation(who)));
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    await askers.question(who, (request.params.messages[0].content as { text: string }).text);
    return sampling(who);
  });
  return client;
}

async function modernAsker(hub: TestHub, askers: Askers, who: string): Promise<ModernClient> {
  const client = await connectModern(hub, { headers: auth, capabilities: { elicitation: { form: {} }, sampling: {} } });
  client.setRequestHandler("elicitation/create", (async (request: { params: { message: string } }) => {
    await askers.question(who, request.params.message);
    return elicitation(who);
  }) as never);
  client.setRequestHandler("sampling/createMessage", (async (request: { params: { messages: Array<{ content: { text: string } }> } }) => {
    await askers.question(who, request.params.messages[0].content.text);
    return sampling(who);
  }) as never);
  return client;
}

describe("a plain SDK server asking without naming its call, two clients calling it", () => {
  let hub: TestHub;
  const closing: Array<{ close(): Promise<unknown> }> = [];

  before(async () => {
    hub = await startHub({ extraServers: { plain: fixture("plain-asking-server") }, config: { tenants: { t: { apiKey: KEY } } } });
    // its first question (one call in flight: whose it is, is plain) teaches the hub that it names no call
    const first = await hub.connect({ name: "first", capabilities: { elicitation: {} }, headers: auth });
    first.setRequestHandler(ElicitRequestSchema, async () => elicitation("first"));
    closing.push(first);
    assert.equal(textOf(await call(first, "plain_elicit", { prompt: "first question" })), 'first question -> accept {"answer":"first\'s answer"}');
    const status = (await (await fetch(`${hub.origin}/`, { headers: auth })).json()) as { servers: Array<{ name: string; oneClientAtATime?: boolean }> };
    assert.equal(status.servers.find((s) => s.name === "plain")?.oneClientAtATime, true);
  });
  after(async () => {
    await Promise.allSettled(closing.map((c) => c.close()));
    await hub?.stop();
  });

  for (const tool of ["plain_elicit", "plain_sample"] as const) {
    test(`two 2025 sessions calling ${tool} at once are each asked their own question, and get their own answer`, { timeout: 60_000 }, async () => {
      const askers = new Askers(hub);
      const [a, b] = await Promise.all([legacyAsker(hub, askers, "A"), legacyAsker(hub, askers, "B")]);
      closing.push(a, b);
      const [fromA, fromB] = await Promise.all([call(a, tool, { prompt: "question of A" }), call(b, tool, { prompt: "question of B" })]);
      assert.equal(textOf(fromA), expected(tool, "question of A", "A"));
      assert.equal(textOf(fromB), expected(tool, "question of B", "B"));
      assert.deepEqual(Object.fromEntries(askers.asked), { A: ["question of A"], B: ["question of B"] });
    });

    test(`two 2026-07-28 clients of one tenant calling ${tool} at once are each asked their own question`, { timeout: 60_000 }, async () => {
      const askers = new Askers(hub);
      const [a, b] = await Promise.all([modernAsker(hub, askers, "A"), modernAsker(hub, askers, "B")]);
      closing.push(a, b);
      const [fromA, fromB] = await Promise.all([callModern(a, tool, { prompt: "question of A" }), callModern(b, tool, { prompt: "question of B" })]);
      assert.equal(textOf(fromA), expected(tool, "question of A", "A"));
      assert.equal(textOf(fromB), expected(tool, "question of B", "B"));
      assert.deepEqual(Object.fromEntries(askers.asked), { A: ["question of A"], B: ["question of B"] });
    });
  }

  test("a call waiting its turn ends when its client cancels it, and the client's next call runs", { timeout: 60_000 }, async () => {
    const askers = new Askers(hub);
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const holder = await hub.connect({ name: "holder", capabilities: { elicitation: {} }, headers: auth });
    closing.push(holder);
    holder.setRequestHandler(ElicitRequestSchema, async () => (await answered, elicitation("holder")));
    const held = call(holder, "plain_elicit", { prompt: "held" });
    await untilQueue(hub, "plain", { running: 1 }, KEY);
    const waiter = await legacyAsker(hub, askers, "waiter");
    closing.push(waiter);
    const controller = new AbortController();
    const waiting = waiter.callTool({ name: "plain_echo", arguments: { text: "never" } }, CallToolResultSchema, { signal: controller.signal });
    await untilQueue(hub, "plain", { queued: 1 }, KEY);
    controller.abort();
    await assert.rejects(waiting);
    await until("the cancelled call to leave the queue", async () => (await queueOf(hub, "plain", KEY)).queued === 0);
    answer();
    assert.equal(textOf(await held), 'held -> accept {"answer":"holder\'s answer"}');
    assert.equal(textOf(await call(waiter, "plain_echo", { text: "after" })), "after");
  });
});

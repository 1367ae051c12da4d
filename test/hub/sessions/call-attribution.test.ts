// A child's question reaches exactly the client whose call asked it: the hub names each forwarded
// call (_meta["agentbox/call"]) and a servers/lib child echoes it, so concurrent calls' questions
// each reach their own caller; a child naming no call, with several calls in flight to it, is
// refused rather than guessed; a child naming another tenant's, another session's or a finished
// call reaches nobody.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";

const KEY_A = `alice-${randomUUID()}`;
const KEY_B = `bob-${randomUUID()}`;
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

interface Asker {
  client: Client;
  /** The prompts this client was asked, and the _meta each came with. */
  asked: string[];
  metas: Array<Record<string, unknown> | undefined>;
}

/** A 2025 client whose model answers "<name> answers: <prompt>", once `ready()` holds (so questions can be held open together). */
async function asker(hub: TestHub, key: string, name: string, ready: () => boolean = () => true): Promise<Asker> {
  const asked: string[] = [];
  const metas: Array<Record<string, unknown> | undefined> = [];
  const client = await hub.connect({ name, capabilities: { sampling: {} }, headers: auth(key) });
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    const prompt = (req.params.messages[0].content as { text: string }).text;
    asked.push(prompt);
    metas.push(req.params._meta);
    await until(`${name}'s question to be held with the others`, ready);
    return { role: "assistant", content: { type: "text", text: `${name} answers: ${prompt}` }, model: name };
  });
  return { client, asked, metas };
}

/** Each client calls `tool` with its prompt, all at once: the calls meet at the child's gate before asking. */
function atOnce(clients: Client[], tool: string, prompts: string[]) {
  const gate = `gate-${randomUUID()}`;
  return Promise.all(clients.map((client, i) => call(client, tool, { prompt: prompts[i], gate, parties: clients.length })));
}

describe("a child's questions during concurrent 2025 calls", () => {
  let hub: TestHub;

  before(async () => {
    hub = await startHub({
      // a server that asks without naming its call once has its calls run one client's at a time from then on (hub/children/queue.ts):
      // such questions each get a process of their own here, so the other tests' calls still meet at its gate
      extraServers: { asking: fixture("gated-asking-server"), unmarked: fixture("gated-asking-server"), unnamed: fixture("gated-asking-server") },
      config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } },
    });
  });
  after(() => hub?.stop());

  test("two calls of one session, asking at once, each get their own answer", async () => {
    const one = await asker(hub, KEY_A, "one", () => one.asked.length === 2);
    const [first, second] = await atOnce([one.client, one.client], "asking_ask", ["first question", "second question"]);
    assert.equal(textOf(first), "model said: one answers: first question");
    assert.equal(textOf(second), "model said: one answers: second question");
    assert.deepEqual([...one.asked].sort(), ["first question", "second question"]);
    // the hub's names for the session and the call never reach the client
    for (const meta of one.metas)
      assert.deepEqual(
        Object.keys(meta ?? {}).filter((k) => k.startsWith("agentbox/")),
        [],
        JSON.stringify(meta),
      );
  });

  test("two calls of one session to a child naming no call, asking at once, are both asked of that session's client", async () => {
    const one = await asker(hub, KEY_A, "one", () => one.asked.length === 2);
    const results = await atOnce([one.client, one.client], "unmarked_ask_unmarked", ["first unmarked", "second unmarked"]);
    assert.deepEqual(results.map(textOf), ["model said: one answers: first unmarked", "model said: one answers: second unmarked"]);
  });

  test("two clients of a tenant, asking at once, are each asked their own question only", async () => {
    const both = () => a.asked.length > 0 && b.asked.length > 0;
    const a: Asker = await asker(hub, KEY_A, "A", both);
    const b: Asker = await asker(hub, KEY_A, "B", both);
    const [fromA, fromB] = await atOnce([a.client, b.client], "asking_ask", ["question of A", "question of B"]);
    assert.equal(textOf(fromA), "model said: A answers: question of A");
    assert.equal(textOf(fromB), "model said: B answers: question of B");
    assert.deepEqual(a.asked, ["question of A"]);
    assert.deepEqual(b.asked, ["question of B"]);
  });

  test("a child naming no call, with two clients' calls in flight before the hub knew it names none, is refused with the remedy and asks nobody", async () => {
    const a = await asker(hub, KEY_A, "A");
    const b = await asker(hub, KEY_A, "B");
    const results = await atOnce([a.client, b.client], "unnamed_ask_unmarked", ["whose is this? (A)", "whose is this? (B)"]);
    for (const result of results) {
      assert.equal(result.isError, true, textOf(result));
      assert.match(textOf(result), /cannot tell which client session sampling\/createMessage from the 'unnamed' server belongs to/);
      assert.match(textOf(result), /from now on the hub runs one client's calls to it at a time, so call again/);
      assert.match(textOf(result), /2 calls to it are in flight/);
      assert.match(textOf(result), /"instances": "session"/);
    }
    assert.deepEqual([...a.asked, ...b.asked], []);
  });

  describe("a hostile child naming a call", () => {
    let holder: Asker;
    let held: { "agentbox/session": string; "agentbox/call"?: string };
    const controller = new AbortController();
    let holding: Promise<unknown>;

    before(async () => {
      // alice's call stays in flight; its progress message says how the hub named it to the child
      holder = await asker(hub, KEY_A, "holder");
      let said!: (message: string) => void;
      const named = new Promise<string>((resolve) => (said = resolve));
      holding = holder.client
        .callTool({ name: "asking_hold", arguments: { ms: 120_000 } }, CallToolResultSchema, {
          signal: controller.signal,
          onprogress: (p) => said(String(p.message)),
        })
        .catch(() => undefined);
      held = JSON.parse(await named) as typeof held;
    });
    after(async () => {
      controller.abort();
      await holding;
    });

    const whoami = async (asking: Asker) =>
      JSON.parse(textOf(await call(asking.client, "asking_whoami"))) as { "agentbox/session": string; "agentbox/call"?: string };

    test("the hub names each call to its child, a new name for each", async () => {
      const client = await asker(hub, KEY_A, "names");
      const names = await Promise.all([1, 2].map(() => whoami(client)));
      assert.equal(names[0]["agentbox/session"], names[1]["agentbox/session"]);
      assert.match(held["agentbox/call"] ?? "", /^[0-9a-f-]{36}$/, JSON.stringify(held));
      assert.ok(names[0]["agentbox/call"] && names[1]["agentbox/call"], JSON.stringify(names));
      assert.equal(new Set([held["agentbox/call"], names[0]["agentbox/call"], names[1]["agentbox/call"]]).size, 3);
    });

    test("a client's own _meta naming another session and call reaches the child as the hub's names", async () => {
      const forger = await asker(hub, KEY_A, "forger");
      const forged = { "agentbox/session": held["agentbox/session"], "agentbox/call": held["agentbox/call"] };
      const result = await forger.client.callTool({ name: "asking_whoami", arguments: {}, _meta: forged }, CallToolResultSchema);
      const named = JSON.parse(textOf(result as Parameters<typeof textOf>[0])) as typeof held;
      assert.notEqual(named["agentbox/session"], held["agentbox/session"], JSON.stringify(named));
      assert.match(named["agentbox/call"] ?? "", /^[0-9a-f-]{36}$/, JSON.stringify(named));
      assert.notEqual(named["agentbox/call"], held["agentbox/call"]);
    });

    /** `asking`'s call to the hostile tool names `session` and `call`: it is refused, and neither the holder nor the asker is asked. */
    async function reachesNobody(asking: Asker, session: string, callId: string | undefined): Promise<void> {
      const result = await call(asking.client, "asking_ask_as", { prompt: "for someone's model", session, call: callId ?? "" });
      assert.equal(result.isError, true, textOf(result));
      assert.match(textOf(result), /names a call .* that is not in flight to it in the session it names/);
      assert.deepEqual([...holder.asked, ...asking.asked], []);
    }

    test("of another tenant's session reaches nobody", async () => {
      await reachesNobody(await asker(hub, KEY_B, "bob"), held["agentbox/session"], held["agentbox/call"]);
    });

    test("of another session of its tenant, under its own session's name, reaches nobody", async () => {
      const other = await asker(hub, KEY_A, "other");
      await reachesNobody(other, (await whoami(other))["agentbox/session"], held["agentbox/call"]);
    });

    test("that has finished reaches nobody", async () => {
      const late = await asker(hub, KEY_A, "late");
      const done = await whoami(late);
      await reachesNobody(late, done["agentbox/session"], done["agentbox/call"]);
    });
  });
});

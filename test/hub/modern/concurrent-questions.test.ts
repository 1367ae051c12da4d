// 2026-07-28 clients of a tenant share one context, so their calls to a child are in flight in one
// session: a child's question reaches the call that asked it (named by the hub, echoed by the
// child) as that call's input_required, never another client's call; one naming only the session
// while two clients' calls are in flight (before the hub knew it names no call) is refused, and nobody is asked.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/client";
import { fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";
import { callModern, connectModern, envelope, postModern } from "./modern-client.js";

const KEY_A = `alice-${randomUUID()}`;
const KEY_B = `bob-${randomUUID()}`;
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

interface ModernAsker {
  client: Client;
  asked: string[];
}

type SamplingRequest = { params: { messages: Array<{ content: { text?: string } }> } };

/** A pinned 2026 client whose model answers "<name>'s model", once `ready()` holds (so both questions are out at once). */
async function modernAsker(hub: TestHub, key: string, name: string, ready: () => boolean): Promise<ModernAsker> {
  const asked: string[] = [];
  const client = await connectModern(hub, { headers: auth(key), capabilities: { sampling: {} } });
  client.setRequestHandler("sampling/createMessage", (async (request: SamplingRequest) => {
    asked.push(request.params.messages[0].content.text ?? "");
    await until(`${name}'s question to be out with the other's`, ready);
    return { role: "assistant", content: { type: "text", text: `${name}'s model` }, model: name };
  }) as never);
  return { client, asked };
}

/** Two clients asked at once: each answer waits until both have been asked. */
async function pair(hub: TestHub, keys: [string, string]): Promise<[ModernAsker, ModernAsker]> {
  const both = () => a.asked.length > 0 && b.asked.length > 0;
  const a: ModernAsker = await modernAsker(hub, keys[0], "A", both);
  const b: ModernAsker = await modernAsker(hub, keys[1], "B", both);
  return [a, b];
}

describe("concurrent questions of 2026-07-28 calls", () => {
  let hub: TestHub;
  const clients: Client[] = [];

  before(async () => {
    hub = await startHub({
      // a server that asks without naming its call once has its calls run one at a time from then on (hub/children/queue.ts):
      // such questions each get a process of their own here, so the others' calls still meet at its gate
      extraServers: { asking: fixture("gated-asking-server"), unmarked: fixture("gated-asking-server"), naming: fixture("gated-asking-server") },
      config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } },
    });
  });
  after(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await hub?.stop();
  });

  test("with one call in flight, a child naming no call still asks its caller (as input_required)", { timeout: 60_000 }, async () => {
    const only = await modernAsker(hub, KEY_A, "only", () => true);
    clients.push(only.client);
    assert.equal(textOf(await callModern(only.client, "unmarked_ask_unmarked", { prompt: "just me" })), "model said: only's model");
    assert.deepEqual(only.asked, ["just me"]);
  });

  /** A and B call `tool` at once, each with its own prompt (meeting at the child's gate when they share a process); their results, in order. */
  async function together(keys: [string, string], tool: string, prompts: [string, string]) {
    const askers = await pair(hub, keys);
    clients.push(...askers.map((x) => x.client));
    const meeting = keys[0] === keys[1] ? { gate: `gate-${randomUUID()}`, parties: 2 } : {};
    const results = await Promise.all(askers.map((x, i) => callModern(x.client, tool, { prompt: prompts[i], ...meeting })));
    return { askers, results };
  }

  for (const [kind, keys] of [
    ["one tenant", [KEY_A, KEY_A]],
    ["two tenants", [KEY_A, KEY_B]],
  ] as const) {
    test(`two clients of ${kind}, asking at once, each get their own question and their own answer`, { timeout: 60_000 }, async () => {
      const { askers, results } = await together([...keys], "asking_ask", ["question of A", "question of B"]);
      assert.deepEqual(results.map(textOf), ["model said: A's model", "model said: B's model"]);
      assert.deepEqual(
        askers.map((x) => x.asked),
        [["question of A"], ["question of B"]],
      );
    });
  }

  test("a child naming the shared context but no call, with two clients' calls in flight, is refused and asks nobody", { timeout: 60_000 }, async () => {
    const { askers, results } = await together([KEY_A, KEY_A], "naming_ask_naming_session", ["whose? (A)", "whose? (B)"]);
    for (const result of results) {
      assert.equal(result.isError, true, textOf(result));
      assert.match(textOf(result), /2 calls to it are in flight and it does not name the one asking/);
      assert.match(textOf(result), /2026-07-28 clients of a tenant share one context/);
    }
    assert.deepEqual(
      askers.flatMap((x) => x.asked),
      [],
    );
  });

  test("two clients of one tenant logging at once each hear their own call's log line only", { timeout: 60_000 }, async () => {
    const gate = `gate-${randomUUID()}`;
    const logging = (line: string) =>
      postModern(
        hub,
        {
          id: 1,
          method: "tools/call",
          params: { name: "asking_log", arguments: { prompt: line, gate, parties: 2 }, _meta: envelope({ "io.modelcontextprotocol/logLevel": "info" }) },
        },
        auth(KEY_A),
      );
    const [a, b] = await Promise.all([logging("line of A"), logging("line of B")]);
    assert.match(JSON.stringify(a.json?.result), /logged/, a.text);
    assert.match(JSON.stringify(b.json?.result), /logged/, b.text);
    assert.match(a.text, /line of A/);
    assert.doesNotMatch(a.text, /line of B/);
    assert.match(b.text, /line of B/);
    assert.doesNotMatch(b.text, /line of A/);
  });
});

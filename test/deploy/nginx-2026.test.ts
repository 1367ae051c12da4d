// MCP 2026-07-28 clients through real nginx with the shipped config (deploy/nginx) and two real
// hubs: that revision has no session id, so a client's default context and the calls waiting for
// its input_required answers stay on one replica by the API key's hash; a request naming a context
// handle (Mcp-Param-Context) goes to the handle's replica; a retry that reaches another replica, or
// a handle whose replica is unknown, is told so in words; a draining replica sends new work on but
// still serves the calls it holds.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import type { Client } from "@modelcontextprotocol/client";
import { fixture, startHub, textOf, type TestHub } from "../helpers/hub.js";
import { callModern, connectModern, envelope, postModern, samplingAnswer as answer, samplingCall, type ModernReply } from "../hub/modern/modern-client.js";
import { auth, endpoint, replicaFor, replicasBehindNginx, rootWith } from "./router.js";
import { until } from "../helpers/wait.js";

const NAMES = ["r1", "r2"];

/** The first round of a sampling call: input_required with the child's request and the sealed state. */
async function firstRound(target: TestHub, key: string): Promise<{ requestState: string; inputKey: string }> {
  const { json, text } = await postModern(target, samplingCall(), auth(key));
  const result = json?.result as { resultType: string; requestState: string; inputRequests: Record<string, unknown> };
  assert.equal(result?.resultType, "input_required", text);
  return { requestState: result.requestState, inputKey: Object.keys(result.inputRequests)[0] };
}

const retry = (target: TestHub, key: string, round: { requestState: string; inputKey: string }, text: string): Promise<ModernReply> =>
  postModern(target, samplingCall({ requestState: round.requestState, inputResponses: { [round.inputKey]: answer(text) } }), auth(key));

describe("MCP 2026-07-28 clients over two replicas behind nginx (deploy/nginx)", () => {
  const replicas = replicasBehindNginx(NAMES, (name) =>
    startHub({
      servers: ["terminal", "code"],
      extraServers: { conformance: fixture("conformance-server") },
      env: { AGENTBOX_REPLICA: name, AGENTBOX_DRAIN_MS: "60000" },
    }),
  );
  const { hubs } = replicas;

  it("keeps a pinned v2 client's terminal and interpreter on one replica across calls", async () => {
    for (const [replica, key] of replicas.keyOn) {
      const client: Client = await connectModern(endpoint(replicas.router.origin), { headers: auth(key) });
      try {
        const kept = await callModern(client, "code_execute", { language: "python", code: `kept = "${replica}-${key}"` });
        assert.equal(kept.isError, undefined, textOf(kept));
        const created = await callModern(client, "terminal_session_create", {});
        assert.equal(created.isError, undefined, textOf(created));
        const terminal = (created.structuredContent as { id: string }).id;
        await callModern(client, "terminal_session_send", { id: terminal, input: `MARK=${replica}\n` });
        for (let i = 0; i < 4; i++) {
          assert.equal((await callModern(client, "hub_status")).structuredContent?.replica, replica);
          assert.match(textOf(await callModern(client, "code_execute", { language: "python", code: "print(kept)" })), new RegExp(`${replica}-${key}`));
          const sent = await callModern(client, "terminal_session_send", { id: terminal, input: `echo mark-$MARK-${i}\n`, waitFor: `mark-${replica}-${i}` });
          assert.equal(sent.isError, undefined, textOf(sent));
        }
      } finally {
        await client.close();
      }
    }
  });

  it("completes an input_required round trip through the router, for the v2 client and for raw retries", async () => {
    const [replica, key] = [...replicas.keyOn][0];
    const client = await connectModern(endpoint(replicas.router.origin), { headers: auth(key), capabilities: { sampling: {} } });
    try {
      client.setRequestHandler("sampling/createMessage", async () => answer(`a model behind ${replica}`) as never);
      for (let i = 0; i < 3; i++) assert.match(textOf(await callModern(client, "conformance_test_sampling", { prompt: "hi" })), new RegExp(`LLM response: a model behind ${replica}`));
    } finally {
      await client.close();
    }
    const round = await firstRound(endpoint(replicas.router.origin), key);
    const done = await retry(endpoint(replicas.router.origin), key, round, "through nginx");
    assert.match(JSON.stringify(done.json?.result), /LLM response: through nginx/, done.text);
  });

  it("tells a retry that reached another replica which replica held its call, and to call again", async () => {
    const [holder, other] = NAMES;
    const round = await firstRound(hubs.get(holder)!, "direct");
    const lost = await retry(hubs.get(other)!, "direct", round, "to the wrong replica");
    assert.equal(lost.json?.error?.code, -32602, lost.text);
    assert.match(lost.json!.error!.message, new RegExp(`held by replica '${holder}', but its retry reached replica '${other}'`));
    assert.match(lost.json!.error!.message, /Send the request again without inputResponses and requestState/);
    assert.doesNotMatch(lost.text, /LLM response/);
    // the call is still the holder's: its own replica takes the answer
    const own = await retry(hubs.get(holder)!, "direct", round, "at home");
    assert.match(JSON.stringify(own.json?.result), /LLM response: at home/, own.text);
  });

  it("sends a request naming a context handle (Mcp-Param-Context) to the handle's replica, whatever the key's hash", async () => {
    for (const [keyReplica, key] of replicas.keyOn) {
      for (const named of NAMES) {
        const reached = await rootWith(replicas.router.origin, { ...auth(key), "Mcp-Param-Context": `${named}.${randomUUID()}` });
        assert.equal(reached.status, 200, JSON.stringify(reached.body));
        assert.equal(reached.body.replica, named, `key of ${keyReplica}, handle of ${named}`);
      }
      // a Base64-encoded value (SEP-2243) is not decoded by the router: the pool serves it, by the key
      const encoded = `=?base64?${Buffer.from(`${NAMES.find((n) => n !== keyReplica)}.${randomUUID()}`).toString("base64")}?=`;
      assert.equal((await rootWith(replicas.router.origin, { ...auth(key), "Mcp-Param-Context": encoded })).body.replica, keyReplica);
    }
    // a session id still comes first
    const both = await rootWith(replicas.router.origin, { "Mcp-Session-Id": `r9.${randomUUID()}`, "Mcp-Param-Context": `r1.${randomUUID()}` });
    assert.equal(both.status, 404);
    assert.equal(both.body.error?.code, -32001);
  });

  it("takes a v2 client whose key hashes to one replica to the context it minted on the other, by the handle", async () => {
    const [[minter, mintKey], [elsewhere, otherKey]] = [...replicas.keyOn];
    const a = await connectModern(endpoint(replicas.router.origin), { headers: auth(mintKey) });
    const b = await connectModern(endpoint(replicas.router.origin), { headers: auth(otherKey) });
    try {
      const minted = await callModern(a, "hub_new_context");
      assert.equal(minted.isError, undefined, textOf(minted));
      const { context } = minted.structuredContent as { context: string };
      assert.ok(context.startsWith(`${minter}.`), context);
      const kept = await callModern(a, "code_execute", { language: "python", code: `in_context = "minted on ${minter}"`, context });
      assert.equal(kept.isError, undefined, textOf(kept));
      // b's own requests go to the other replica; naming the handle, its client sends Mcp-Param-Context and reaches the context
      assert.equal((await callModern(b, "hub_status")).structuredContent?.replica, elsewhere);
      assert.match(textOf(await callModern(b, "code_execute", { language: "python", code: "print(in_context)", context })), new RegExp(`minted on ${minter}`));
      const withoutIt = await callModern(b, "code_execute", { language: "python", code: "print(in_context)" });
      assert.doesNotMatch(textOf(withoutIt), /minted on/);
    } finally {
      await Promise.allSettled([a.close(), b.close()]);
    }
  });

  it("answers a handle naming no replica, or forged to reach elsewhere, with 404 context not found and what to do", async () => {
    for (const handle of [`r9.${randomUUID()}`, "agentbox_any.x", "127.0.0.1:22.x", "R1.x", "-r1.x", "../r1.x", "no-dot-at-all"]) {
      const refused = await rootWith(replicas.router.origin, { "Mcp-Param-Context": handle });
      assert.equal(refused.status, 404, handle);
      assert.equal(refused.body.error?.code, -32602, handle);
      assert.match(refused.body.error?.message ?? "", /Context not found: .*Mint a new context/, handle);
    }
  });

  it("a draining replica sends new 2026 requests on, still takes the answers its waiting call needs, and ends its listen stream cleanly", async () => {
    const victim = NAMES[1];
    const key = replicas.keyOn.get(victim)!;
    const hub = hubs.get(victim)!;
    // a call waiting for its client's answer, and a listen stream, both on the replica about to drain
    const round = await firstRound(endpoint(replicas.router.origin), key);
    const listener = await connectModern(hub, { headers: auth(key) });
    const subscription = await listener.listen({ toolsListChanged: true });
    const exited = new Promise<number | null>((r) => hub.process.once("exit", (code) => r(code)));
    hub.process.kill("SIGTERM");
    await until("the replica to stop being ready", async () => {
      const ready = await fetch(`${hub.origin}/readyz`);
      await ready.body?.cancel();
      return ready.status === 503;
    });

    // a new request straight to it: the 503 refusal nginx retries on
    const refused = await postModern(hub, { id: 3, method: "tools/list", params: { _meta: envelope() } }, auth(key));
    assert.equal(refused.res.status, 503, refused.text);
    assert.match(refused.json?.error?.message ?? "", new RegExp(`Replica '${victim}' is draining`));
    // a handle is no pass: only one of this replica's own contexts is still served here
    const listOf = (handle: string) => postModern(hub, { id: 4, method: "tools/list", params: { _meta: envelope() } }, { ...auth(key), "Mcp-Param-Context": handle });
    assert.equal((await listOf(`${NAMES[0]}.${randomUUID()}`)).res.status, 503);
    const own = await listOf(`${victim}.${randomUUID()}`);
    assert.equal(own.res.status, 200, own.text);
    // through the router the same key's new request is served by the other replica
    assert.equal(await replicaFor(replicas.router.origin, key), NAMES[0]);

    // the waiting call's answer, delivered to its replica, still completes it; then the drain ends
    const done = await retry(hub, key, round, "while draining");
    assert.match(JSON.stringify(done.json?.result) ?? "", /LLM response: while draining/, `${done.res.status} ${done.text} ${hub.logs.slice(-8).join("\n")}`);
    assert.equal(await exited, 0);
    assert.equal(await subscription.closed, "graceful");
    await listener.close().catch(() => undefined);
  });
});

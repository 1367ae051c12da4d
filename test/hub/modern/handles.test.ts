// Several contexts per tenant (hub_new_context): each handle names its own terminals and
// interpreters, apart from the default context; a 2025 client may use one too; a tampered,
// forged, another hub's, another tenant's or expired (../sessions/contexts.test.ts) handle names nothing and reaches no state;
// contexts count against the session cap; hub_end_session given a context frees what it held.
import assert from "node:assert/strict";
import fs from "node:fs";
import { randomBytes, randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/client";
import type { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { CreateMessageRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";
import { callModern, connectModern } from "./modern-client.js";

const KEY_A = `alice-${randomBytes(16).toString("hex")}`;
const KEY_B = `bob-${randomBytes(16).toString("hex")}`;
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

async function mint(client: Client): Promise<string> {
  const minted = await callModern(client, "hub_new_context");
  assert.notEqual(minted.isError, true, textOf(minted));
  return (minted.structuredContent as { context: string }).context;
}

const python = (code: string, context?: string) => ({ language: "python", code, ...(context ? { context } : {}) });

/** Flip one character of the handle's MAC. */
function tampered(handle: string): string {
  const last = handle.at(-1) === "A" ? "B" : "A";
  return handle.slice(0, -1) + last;
}

const NOT_OURS = /not one this hub gave you.*hub_new_context/s;

describe("context handles", () => {
  let hub: TestHub;
  let alice: Client;
  let bob: Client;
  let first: string;
  let second: string;

  before(async () => {
    hub = await startHub({
      servers: ["terminal", "code"],
      extraServers: { tagger: { ...fixture("param-header-server"), instances: "session" }, echo: { ...fixture("echo-server"), instances: "session" } },
      config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } },
    });
    alice = await connectModern(hub, { headers: auth(KEY_A) });
    bob = await connectModern(hub, { headers: auth(KEY_B) });
    // the client mirrors x-mcp-header arguments into Mcp-Param-* headers from the tools it has listed
    await Promise.all([alice.listTools(), bob.listTools()]);
    first = await mint(alice);
    second = await mint(alice);
  });
  after(async () => {
    await Promise.allSettled([alice?.close(), bob?.close()]);
    await hub?.stop();
  });

  test("the stateful tools and hub_sessions list `context` marked x-mcp-header Context; the others do not; the list is the same each time", async () => {
    const { tools } = await alice.listTools();
    const contextOf = (name: string) => (tools.find((t) => t.name === name)?.inputSchema.properties as Record<string, Record<string, unknown>>)?.context;
    for (const name of ["terminal_session_create", "terminal_exec", "code_execute", "tagger_tag", "hub_sessions", "hub_end_session"]) {
      assert.equal(contextOf(name)?.["x-mcp-header"], "Context", name);
      assert.equal(contextOf(name)?.type, "string", name);
    }
    for (const name of ["hub_status", "hub_new_context"]) assert.equal(contextOf(name), undefined, name);
    // the fixture's own additionalProperties:false stays
    assert.equal(tools.find((t) => t.name === "tagger_tag")?.inputSchema.additionalProperties, false);
    assert.deepEqual((await alice.listTools()).tools, tools);
  });

  test("a handle begins with no replica on an unnamed hub, and hub_new_context says when it expires", async () => {
    const minted = await callModern(alice, "hub_new_context");
    const data = minted.structuredContent as { context: string; expiresAt: string; replica?: string };
    assert.match(data.context, /^[0-9a-f-]{36}\.[0-9a-z]+\.[A-Za-z0-9_-]+$/);
    assert.ok(Date.parse(data.expiresAt) > Date.now() + 3_600_000);
    assert.equal(data.replica, undefined);
    assert.match(textOf(minted), /Pass it as `context`/);
    await callModern(alice, "hub_end_session", { context: data.context });
  });

  test("two handles hold two interpreters and two terminals; the default context a third", async () => {
    await callModern(alice, "code_execute", python("x = 'first'", first));
    await callModern(alice, "code_execute", python("x = 'second'", second));
    await callModern(alice, "code_execute", python("x = 'default'"));
    assert.equal(textOf(await callModern(alice, "code_execute", python("x", first))), "'first'");
    assert.equal(textOf(await callModern(alice, "code_execute", python("x", second))), "'second'");
    assert.equal(textOf(await callModern(alice, "code_execute", python("x"))), "'default'");

    const opened = (await callModern(alice, "terminal_session_create", { context: first })).structuredContent as { id: string };
    const ids = async (context?: string) => {
      const listed = await callModern(alice, "terminal_session_list", context ? { context } : {});
      return JSON.stringify(listed.structuredContent);
    };
    assert.match(await ids(first), new RegExp(opened.id));
    assert.doesNotMatch(await ids(second), new RegExp(opened.id));
    assert.doesNotMatch(await ids(), new RegExp(opened.id));
    const described = (await callModern(alice, "hub_sessions", { context: first })).structuredContent as { id: string; transport: string };
    assert.equal(described.transport, "context");
    assert.ok(first.startsWith(`${described.id}.`));
  });

  test("a per-session child gets one instance per context, and never sees the hub's `context` argument", async () => {
    const tag = async (context?: string) => {
      const result = await callModern(alice, "tagger_tag", { region: "eu", ...(context ? { context } : {}) });
      assert.notEqual(result.isError, true, textOf(result));
      return JSON.parse(textOf(result)) as { tagged: number; pid: number };
    };
    const a = await tag(first);
    const b = await tag(second);
    const again = await tag(first);
    assert.notEqual(a.pid, b.pid);
    assert.equal(again.pid, a.pid);
    assert.equal(again.tagged, a.tagged + 1);
  });

  test("a 2025 client's call may name a context too", async () => {
    const legacy: LegacyClient = await hub.connect({ headers: auth(KEY_A) });
    try {
      assert.equal(textOf(await call(legacy, "code_execute", python("x", second))), "'second'");
    } finally {
      await legacy.close();
    }
  });

  test("a child's question during a call in a context goes to the client that made the call, in either era", async () => {
    const legacy: LegacyClient = await hub.connect({ headers: auth(KEY_A), capabilities: { sampling: {} } });
    const modern = await connectModern(hub, { headers: auth(KEY_A), capabilities: { sampling: {} } });
    try {
      legacy.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: "assistant", content: { type: "text", text: "the 2025 client" }, model: "m" }));
      modern.setRequestHandler(
        "sampling/createMessage",
        async () => ({ role: "assistant", content: { type: "text", text: "the 2026 client" }, model: "m" }) as never,
      );
      await modern.listTools();
      assert.equal(textOf(await call(legacy, "echo_sample", { prompt: "who?", context: first })), "model said: the 2025 client");
      assert.equal(textOf(await callModern(modern, "echo_sample", { prompt: "who?", context: first })), "model said: the 2026 client");
    } finally {
      await Promise.allSettled([legacy.close(), modern.close()]);
    }
  });

  test("a tool that keeps no state refuses a `context`, and says so", async () => {
    const result = await callModern(alice, "hub_status", { context: first });
    assert.equal(result.isError, true);
    assert.match(textOf(result), /hub_status takes no `context` argument/);
  });

  test("a tampered, forged, malformed or another tenant's handle is refused and reaches no state", async () => {
    const bobs = await mint(bob);
    await callModern(bob, "code_execute", python("x = 'bob-secret'", bobs));
    const [uuid, expiry] = first.split(".");
    const attempts: Array<[string, unknown, RegExp]> = [
      ["tampered", tampered(first), NOT_OURS],
      ["forged", `${randomUUID()}.${expiry}.${randomBytes(32).toString("base64url")}`, NOT_OURS],
      ["another id under a real MAC", `${randomUUID()}.${first.split(".").slice(1).join(".")}`, NOT_OURS],
      ["a later expiry", `${uuid}.${(parseInt(expiry, 36) + 3_600_000).toString(36)}.${first.split(".")[2]}`, NOT_OURS],
      ["the bare session id", uuid, NOT_OURS],
      ["a number", 42, /must be a context handle/],
      ["a huge one", `${".x".repeat(1000)}${first}`, NOT_OURS],
    ];
    for (const [what, handle, refusal] of attempts) {
      const reply = await alice.callTool({ name: "code_execute", arguments: python("x = 'pwned'; x", handle as string) });
      const result = reply as CallToolResult;
      assert.equal(result.isError, true, `${what}: ${textOf(result)}`);
      assert.match(textOf(result), refusal, what);
    }
    // bob's handle under alice's key names nothing of alice's, and reaches none of bob's
    const stolen = await callModern(alice, "code_execute", python("x", bobs));
    assert.equal(stolen.isError, true);
    assert.match(textOf(stolen), NOT_OURS);
    assert.doesNotMatch(textOf(stolen), /bob-secret/);
    assert.equal(textOf(await callModern(bob, "code_execute", python("x", bobs))), "'bob-secret'");
    // nothing ran anywhere: each context still holds what it held
    assert.equal(textOf(await callModern(alice, "code_execute", python("x", first))), "'first'");
    assert.equal(textOf(await callModern(alice, "code_execute", python("x"))), "'default'");
  });

  test("hub_end_session given a context ends that context and frees its terminal; the caller's default context lives on", async () => {
    const doomed = await mint(alice);
    const opened = (await callModern(alice, "terminal_session_create", { shell: "sleep", args: ["8765"], context: doomed })).structuredContent as {
      pid: number;
    };
    assert.ok(fs.existsSync(`/proc/${opened.pid}`));
    const ended = await callModern(alice, "hub_end_session", { context: doomed });
    assert.ok(doomed.startsWith(`${(ended.structuredContent as { ended: string }).ended}.`));
    await until("the context's terminal ends", () => !fs.existsSync(`/proc/${opened.pid}`));
    const after = await callModern(alice, "terminal_session_list", { context: doomed });
    assert.equal(after.isError, true);
    assert.match(textOf(after), /has ended.*hub_new_context/s);
    assert.equal(textOf(await callModern(alice, "code_execute", python("x"))), "'default'");
  });
});

describe("context handles under limits", () => {
  let hub: TestHub;
  let other: TestHub;
  let client: Client;

  before(async () => {
    [hub, other] = await Promise.all([
      startHub({ servers: [], env: { AGENTBOX_MAX_SESSIONS: "2" } }),
      startHub({ servers: [], env: { AGENTBOX_REPLICA: "other" } }),
    ]);
    client = await connectModern(hub);
    await client.listTools();
  });
  after(async () => {
    await client?.close();
    await Promise.allSettled([hub?.stop(), other?.stop()]);
  });

  test("a handle from another hub (or an earlier run of this one) names nothing here", async () => {
    const elsewhere = await connectModern(other);
    try {
      const minted = (await callModern(elsewhere, "hub_new_context")).structuredContent as { context: string; replica?: string };
      const foreign = minted.context;
      // a named replica's handles begin with its name, as its session ids do, so a router finds it
      assert.match(foreign, /^other\.[0-9a-f-]{36}\./);
      assert.equal(minted.replica, "other");
      const result = await callModern(client, "hub_sessions", { context: foreign });
      assert.equal(result.isError, true);
      assert.match(textOf(result), NOT_OURS);
    } finally {
      await elsewhere.close();
    }
  });

  // an expired handle, on the hub's clock: contexts.test.ts

  test("minting beyond the tenant's session cap is refused; ending one makes room", async () => {
    const one = await mint(client);
    await mint(client);
    const third = await callModern(client, "hub_new_context");
    assert.equal(third.isError, true);
    assert.match(textOf(third), /No new context: Too many sessions.*AGENTBOX_MAX_SESSIONS/s);
    await callModern(client, "hub_end_session", { context: one });
    await mint(client);
  });
});

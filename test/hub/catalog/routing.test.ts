// Aggregation, prefixing and routing through a real hub with real child processes.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ListToolsResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { builtinServers } from "../../../hub/config/config.js";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";

describe("aggregation and routing", () => {
  let hub: TestHub;
  before(async () => {
    hub = await startHub({
      extraServers: {
        echo: fixture("echo-server"),
        other: { ...fixture("echo-server"), prefix: "alt", tools: { allow: ["echo", "whoami"] } },
        bare: { ...fixture("echo-server"), prefix: "", tools: { deny: ["*"] } },
        off: { ...fixture("echo-server"), enabled: false },
      },
    });
  });
  after(() => hub.stop());

  test("tools of every child are listed under their prefix, filtered by allow/deny", async () => {
    const client = await hub.connect();
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    assert.ok(names.includes("echo_echo") && names.includes("echo_slow") && names.includes("echo_crash"));
    assert.deepEqual(
      names.filter((n) => n.startsWith("alt_")),
      ["alt_echo", "alt_whoami"],
    );
    assert.ok(!names.includes("echo"), "the bare server's tools are all denied");
    for (const name of names) assert.match(name, /^[a-zA-Z0-9_-]{1,64}$/);
  });

  test("a call is routed to the child that owns the prefix", async () => {
    const client = await hub.connect();
    const result = await call(client, "alt_echo", { text: "via alt" });
    assert.equal(textOf(result), "via alt");
    assert.equal(result.isError, undefined);
  });

  test("an unknown tool is a protocol error naming close matches", async () => {
    const client = await hub.connect();
    await assert.rejects(
      () => call(client, "echo_ecko", { text: "x" }),
      (err: Error) => {
        assert.match(err.message, /Unknown tool 'echo_ecko'/);
        assert.match(err.message, /echo_echo/);
        return true;
      },
    );
  });

  test("bad arguments come back as a tool error saying what was wrong", async () => {
    const client = await hub.connect();
    const result = await call(client, "echo_echo", { text: 42 });
    assert.equal(result.isError, true);
    assert.match(textOf(result), /text/);
  });

  test("the child learns the client session, and sessions differ per client", async () => {
    const a = await hub.connect();
    const b = await hub.connect();
    const sa = textOf(await call(a, "echo_whoami"));
    const sb = textOf(await call(b, "echo_whoami"));
    assert.ok(sa && sb && sa !== sb);
    assert.equal(textOf(await call(a, "alt_whoami")), sa, "the same session id reaches every child");
  });

  test("status, readiness and metrics describe the children", async () => {
    const status = await (await fetch(hub.origin + "/")).json();
    const byName = Object.fromEntries(status.servers.map((s: { name: string }) => [s.name, s]));
    assert.equal(byName.echo.state, "ready");
    assert.equal(byName.echo.tools, 11);
    assert.equal(typeof byName.echo.pid, "number");
    assert.equal(byName.off.state, "disabled");
    assert.equal((await fetch(hub.origin + "/readyz")).status, 200);
    assert.equal((await fetch(hub.origin + "/healthz")).status, 200);
    const client = await hub.connect();
    await call(client, "echo_echo", { text: "count me" });
    const metrics = await (await fetch(hub.origin + "/metrics")).text();
    assert.match(metrics, /agentbox_tool_calls_total\{tool="echo_echo",outcome="ok"\} \d+/);
    assert.match(metrics, /agentbox_tool_call_duration_seconds_bucket\{[^}]*tool="echo_echo"/);
    assert.match(metrics, /agentbox_sessions_active\{transport="streamable"\} \d+/);
  });

  test("a remote Streamable HTTP server is aggregated like a stdio one", async () => {
    const front = await startHub({ extraServers: { remote: { url: hub.url, prefix: "far" } } });
    try {
      const client = await front.connect();
      const names = (await client.request({ method: "tools/list" }, ListToolsResultSchema)).tools.map((t) => t.name);
      assert.ok(names.includes("far_echo_echo"), names.join(","));
      assert.equal(textOf(await call(client, "far_echo_echo", { text: "two hops" })), "two hops");
    } finally {
      await front.stop();
    }
  });

  test("/v1/mcp serves the same endpoint", async () => {
    const client = await hub.connect({ path: "/v1/mcp" });
    assert.equal(textOf(await call(client, "echo_echo", { text: "v1" })), "v1");
  });
});

/** The error a hub that must refuse to start fails with; a hub that starts anyway is stopped. */
async function startFailure(options: Parameters<typeof startHub>[0]): Promise<Error> {
  const outcome = await startHub(options).then(
    async (hub) => {
      await hub.stop();
      return undefined;
    },
    (err: Error) => err,
  );
  assert.ok(outcome, "the hub started although it should have refused");
  return outcome;
}

describe("name collisions", () => {
  test("a child publishing a name the hub serves itself stops the hub", async () => {
    // the code server's own `sessions` tool, published under the prefix "hub", is hub_sessions
    const err = await startFailure({ extraServers: { imposter: { ...builtinServers(["code"]).code, prefix: "hub", tools: { allow: ["sessions"] } } } });
    assert.match(err.message, /'hub_sessions'.*the hub serves itself/);
  });

  test("two children publishing the same name stop the hub with a message naming both", async () => {
    const err = await startFailure({ extraServers: { one: { ...fixture("echo-server"), prefix: "x" }, two: { ...fixture("echo-server"), prefix: "x" } } });
    assert.match(err.message, /collision: 'x_echo' is published by server 'one'.*and by server 'two'/);
  });
});

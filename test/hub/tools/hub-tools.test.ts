// The hub's own tools: status, metrics, the caller's session, and ending it.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";

describe("hub tools", () => {
  let hub: TestHub;
  before(async () => {
    hub = await startHub({ servers: ["terminal"], extraServers: { echo: fixture("echo-server") } });
  });
  after(() => hub.stop());

  test("hub_status lists every server with state, pid and tool count", async () => {
    const client = await hub.connect();
    const result = await call(client, "hub_status");
    const data = result.structuredContent as { servers: Array<{ name: string; state: string; pid: number; tools: number }>; version: string };
    const echo = data.servers.find((s) => s.name === "echo")!;
    assert.equal(echo.state, "ready");
    assert.equal(echo.tools, 11);
    assert.match(textOf(result), /echo\s+ready/);
  });

  test("hub_metrics reports memory and CPU per server process tree and disk", async () => {
    const client = await hub.connect();
    const data = (await call(client, "hub_metrics")).structuredContent as {
      hub: { rssMiB: number };
      servers: Array<{ name: string; rssMiB: number; processes: number }>;
      disk: { freeMiB: number };
      container: { cpus: number };
    };
    assert.ok(data.hub.rssMiB > 0);
    const echo = data.servers.find((s) => s.name === "echo")!;
    assert.ok(echo.rssMiB > 0 && echo.processes >= 1);
    assert.ok(data.disk.freeMiB > 0);
    assert.ok(data.container.cpus >= 1);
  });

  test("hub_sessions shows the caller's own terminals only, and hub_end_session frees them", async () => {
    const mine = await hub.connect();
    const other = await hub.connect();
    const created = await call(mine, "terminal_session_create", {});
    assert.equal(created.isError, undefined, textOf(created));
    await call(other, "terminal_session_create", {});
    const data = (await call(mine, "hub_sessions")).structuredContent as { id: string; held: Record<string, { terminals?: unknown[] }> };
    assert.equal(data.held.terminal?.terminals?.length, 1, JSON.stringify(data));
    const ended = await call(mine, "hub_end_session");
    assert.match(textOf(ended), /ends now/);
    await until("the ended session to be gone", () =>
      call(mine, "hub_status").then(
        () => false,
        () => true,
      ),
    );
    const otherView = (await call(other, "hub_sessions")).structuredContent as { held: Record<string, { terminals?: Array<{ alive: boolean }> }> };
    assert.equal(otherView.held.terminal?.terminals?.length, 1, "the other session keeps its terminal");
  });

  // The session closes once the reply is written, not after a pause: on every way a reply travels
  // (a direct reply, the session's SDK transport, the legacy SSE stream) the client gets it whole,
  // and the session is gone by the time the client could ask again.
  const ways: Array<[string, () => Promise<Client>]> = [
    ["a direct reply", () => hub.connect()],
    // a client that can be asked for sampling is answered through the session's SDK transport
    ["the SDK transport", () => hub.connect({ capabilities: { sampling: {} } })],
    [
      "the legacy SSE stream",
      async () => {
        const client = new Client({ name: "legacy", version: "1" });
        await client.connect(new SSEClientTransport(new URL("/sse", hub.origin)));
        return client;
      },
    ],
  ];
  for (const [way, connect] of ways) {
    test(`hub_end_session over ${way}: the reply arrives whole, then the session is gone`, async () => {
      const client = await connect();
      await client.listTools();
      const ended = await call(client, "hub_end_session");
      assert.equal(ended.isError, undefined, textOf(ended));
      assert.deepEqual(Object.keys(ended.structuredContent ?? {}), ["ended"]);
      await assert.rejects(call(client, "hub_status"), "a call after the end finds no session");
      await client.close().catch(() => undefined);
    });
  }
});

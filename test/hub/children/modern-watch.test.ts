// The listen stream the hub keeps to a 2026-07-28 child for its clients' resource subscriptions
// (hub/children/modern-watch.ts), against a real SDK v2 server (serveStdio over an in-memory pipe):
// it names every URI some session subscribed to, is replaced only when that set changes, and lets
// go of a session's URIs when the session ends, so sessions that come and go cannot grow it.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Client, InMemoryTransport, type JSONRPCMessage } from "@modelcontextprotocol/client";
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio, type StdioServerHandle } from "@modelcontextprotocol/server/stdio";
import { ResourceWatch } from "../../../hub/children/modern-watch.js";

type Sent = { method?: string; id?: unknown; params?: { requestId?: unknown; notifications?: { resourceSubscriptions?: string[] } } };

describe("the resource watch of a 2026-07-28 child", () => {
  let client: Client;
  let served: StdioServerHandle;
  const sent: Sent[] = [];
  const listens = () => sent.filter((m) => m.method === "subscriptions/listen");
  const lastNamed = () => listens().at(-1)?.params?.notifications?.resourceSubscriptions;
  const cancelled = () => sent.filter((m) => m.method === "notifications/cancelled").map((m) => m.params?.requestId);

  before(async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const send = clientSide.send.bind(clientSide);
    clientSide.send = (message: JSONRPCMessage, options?: Parameters<typeof send>[1]) => {
      sent.push(message as Sent);
      return send(message, options);
    };
    served = serveStdio(
      () => {
        const server = new McpServer({ name: "notes", version: "1.0.0" }, { capabilities: { resources: { subscribe: true } } });
        for (const name of ["a", "b"]) server.registerResource(name, `note://${name}`, {}, async (uri) => ({ contents: [{ uri: uri.href, text: name }] }));
        return server;
      },
      { transport: serverSide as never, legacy: "reject" },
    );
    client = new Client({ name: "hub", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
    await client.connect(clientSide);
  });
  after(async () => {
    await client?.close();
    await served?.close();
  });

  test("names every subscribed URI, changes only with the set, and lets go of an ended session's", async () => {
    const watch = new ResourceWatch(client, "notes", 10_000);
    await watch.subscribe("note://a", "s1");
    await watch.subscribe("note://b", "s2");
    await watch.subscribe("note://a", "s2");
    assert.deepEqual(lastNamed(), ["note://a", "note://b"]);
    assert.equal(listens().length, 2, "a URI already named opens no new stream");
    assert.ok(cancelled().includes(listens()[0].id), "the replaced stream is closed");

    // s1 never subscribed to b, and s2 still watches a: nothing changes
    await watch.unsubscribe("note://b", "s1");
    await watch.unsubscribe("note://a", "s1");
    assert.equal(listens().length, 2);

    await watch.forget("s2");
    assert.equal(listens().length, 2, "nobody watches anything: no stream at all");
    assert.ok(cancelled().includes(listens()[1].id), "the last stream is closed");

    await watch.subscribe("note://b", "s3");
    assert.deepEqual(lastNamed(), ["note://b"]);
    await watch.close();
  });
});

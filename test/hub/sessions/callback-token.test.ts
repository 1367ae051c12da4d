// A session's callback token lets whoever holds it call the hub's tools as that session (code's
// callbacks) and mark processes as the session's (the claim the sweeper honours). The hub sends it
// only to the spawned servers that declare they need it (agentbox/sessionCallback: the terminal
// and code servers); a configured third-party server never sees it, and no client can put a token
// of its own in front of any server.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";

interface Seen {
  keys: string[];
  forged: boolean;
}

describe("the session's callback token goes only to the servers that ask for it", () => {
  let hub: TestHub;

  before(async () => {
    hub = await startHub({
      servers: ["terminal"],
      extraServers: {
        plain: fixture("third-party-server"),
        asking: { ...fixture("third-party-server"), env: { CALLBACK_CAPABILITY: "1" } },
      },
    });
  });

  after(() => hub.stop());

  async function seen(tool: string, meta?: Record<string, unknown>): Promise<Seen> {
    const client = await hub.connect();
    try {
      const result = (await client.callTool({ name: tool, arguments: {}, _meta: meta })) as CallToolResult;
      assert.ok(!result.isError, textOf(result));
      return JSON.parse(textOf(result)) as Seen;
    } finally {
      await client.close();
    }
  }

  test("a third-party server is named the session and the call, never sent the token", async () => {
    const { keys } = await seen("plain_meta_keys");
    assert.ok(keys.includes("agentbox/session") && keys.includes("agentbox/call"), JSON.stringify(keys));
    assert.ok(!keys.includes("agentbox/token"), `the token reached a server that did not ask: ${JSON.stringify(keys)}`);
  });

  test("a server declaring agentbox/sessionCallback is sent it, as the terminal is (its commands carry the session's claim)", async () => {
    assert.ok((await seen("asking_meta_keys")).keys.includes("agentbox/token"));
    const client = await hub.connect();
    try {
      const ran = await call(client, "terminal_exec", { command: "printenv AGENTBOX_SESSION" });
      assert.match(textOf(ran), /[A-Za-z0-9_-]{43}/, textOf(ran));
    } finally {
      await client.close();
    }
  });

  test("a token a client puts in _meta reaches no server: dropped for one that did not ask, replaced for one that did", async () => {
    const plain = await seen("plain_meta_keys", { "agentbox/token": "forged" });
    assert.ok(!plain.keys.includes("agentbox/token"), JSON.stringify(plain));
    const asking = await seen("asking_meta_keys", { "agentbox/token": "forged" });
    assert.ok(asking.keys.includes("agentbox/token") && !asking.forged, JSON.stringify(asking));
  });
});

// The configured default selection (servers, tools, catalog in the config file) applies to every
// session, and a session URL can narrow it but never widen it.
//
// Each scope below is one place defaults can be configured, with how its clients connect. Tenants
// (`tenants.<name>.servers/tools/catalog`) add a scope here: the same config keys under a tenant,
// and connect headers carrying that tenant's API key.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { call, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { both } from "../../helpers/raw-http.js";

interface Scope {
  name: string;
  /** Config keys that set the defaults under test to `defaults`. */
  config(defaults: Record<string, unknown>): Record<string, unknown>;
  /** Headers the scope's clients send (a tenant's API key). */
  headers: Record<string, string>;
}

const TENANT_KEY = "selection-tenant-key-0123";
const scopes: Scope[] = [
  { name: "global", config: (defaults) => defaults, headers: {} },
  // the same defaults set for one tenant only; another tenant of the same hub sees everything
  {
    name: "per tenant",
    config: (defaults) => ({ tenants: { research: { apiKey: TENANT_KEY, ...defaults }, other: { apiKey: "another-tenant-key-0123" } } }),
    headers: { Authorization: `Bearer ${TENANT_KEY}` },
  },
];

const SERVERS = ["file", "terminal", "browser"];

async function names(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((t) => t.name).sort();
}

for (const scope of scopes) {
  describe(`configured default selection (${scope.name})`, () => {
    let hub: TestHub;
    const connect = (path = "/mcp") => hub.connect({ path, headers: scope.headers });
    before(async () => {
      // servers as by default: listed from the build's manifest, started on their first call
      hub = await startHub({
        servers: SERVERS,
        config: scope.config({ servers: ["file", "terminal"], tools: ["!terminal_session_*"] }),
        env: { AGENTBOX_START: "" },
      });
    });
    after(() => hub.stop());

    test("a session without parameters gets the default selection", async () => {
      const listed = await names(await connect());
      assert.ok(listed.some((t) => t.startsWith("file_")));
      assert.ok(listed.includes("terminal_exec"));
      assert.ok(!listed.some((t) => t.startsWith("browser_") || t.startsWith("terminal_session_")), listed.join(","));
      assert.ok(listed.includes("hub_status"));
    });

    test("calls outside the defaults are refused, saying a URL cannot widen them", async () => {
      const client = await connect();
      for (const tool of ["browser_navigate", "terminal_session_create"]) {
        const refused = await call(client, tool, {});
        assert.equal(refused.isError, true, tool);
        assert.match(textOf(refused), new RegExp(`'${tool}' exists but is not in this session's selection. The hub's configured selection excludes it`));
      }
    });

    if (scope.name === "per tenant") {
      test("another tenant of the same hub keeps the full catalog", async () => {
        const listed = await names(await hub.connect({ headers: { Authorization: "Bearer another-tenant-key-0123" } }));
        assert.ok(listed.includes("browser_navigate") && listed.includes("terminal_session_create"), listed.join(","));
      });
    }

    test("a URL narrows the defaults", async () => {
      const listed = await names(await connect("/mcp?servers=terminal"));
      assert.deepEqual(
        listed.filter((t) => !t.startsWith("hub_")),
        ["terminal_exec"],
      );
    });

    test("a URL naming a server or tool outside the defaults is refused at initialize", async () => {
      const widening: Array<[string, RegExp]> = [
        ["servers=file,browser", /Server 'browser' is outside the hub's configured selection/],
        ["tools=browser_*", /'browser_\*' matches only tools outside the hub's configured selection/],
        ["tools=terminal_session_create", /'terminal_session_create' matches only tools outside/],
      ];
      for (const [query, message] of widening) {
        const init = {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
        };
        const res = await fetch(`${hub.url}?${query}`, { method: "POST", headers: { ...both, ...scope.headers }, body: JSON.stringify(init) });
        assert.equal(res.status, 400, query);
        assert.match(((await res.json()) as { error: { message: string } }).error.message, message, query);
      }
    });
  });

  describe(`configured search mode (${scope.name})`, () => {
    let hub: TestHub;
    before(async () => {
      hub = await startHub({ servers: ["file", "terminal"], config: scope.config({ catalog: "search", servers: ["terminal"] }), env: { AGENTBOX_START: "" } });
    });
    after(() => hub.stop());

    test("sessions start in search mode over the default selection; ?catalog=full lists that selection", async () => {
      const searching = await hub.connect({ headers: scope.headers });
      const listed = await names(searching);
      assert.ok(listed.length > 0 && listed.every((t) => t.startsWith("hub_")), listed.join(","));
      const found = (await call(searching, "hub_find_tools", { query: "read a file" })).structuredContent as { matches: Array<{ name: string }> };
      assert.ok(found.matches.length > 0, "the search finds something in the defaults");
      assert.ok(
        found.matches.every((m) => !m.name.startsWith("file_")),
        "file_* is outside the defaults",
      );
      const full = await names(await hub.connect({ path: "/mcp?catalog=full", headers: scope.headers }));
      assert.ok(full.includes("terminal_exec") && !full.some((t) => t.startsWith("file_")) && !full.includes("hub_find_tools"));
    });
  });
}

test("a default naming a server the config does not have stops the hub with a clear error", async () => {
  await assert.rejects(
    () => startHub({ servers: ["file"], config: { servers: ["file", "brwoser"] } }),
    /"servers" names 'brwoser', not in mcpServers \(file\)/,
  );
});

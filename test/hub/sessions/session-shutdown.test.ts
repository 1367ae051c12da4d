// SIGTERM with thousands of sessions open: the hub ends within its drain time plus the children's
// stop, instead of spinning on per-session work (a sweep of /proc per closed session queued ahead
// of the forced-exit timer kept 10,000 sessions' hub alive for minutes).
import assert from "node:assert/strict";
import { test } from "node:test";
import { fixture, startHub } from "../../helpers/hub.js";
import { both } from "../../helpers/raw-http.js";

const SESSIONS = 4000;
const DRAIN_MS = 2000;

test(`SIGTERM with ${SESSIONS / 2} sessions open and as many just closed ends the hub cleanly within the drain time and a margin`, async () => {
  const hub = await startHub({
    servers: ["file", "terminal"],
    extraServers: { echo: fixture("echo-server") },
    env: { AGENTBOX_DRAIN_MS: String(DRAIN_MS), AGENTBOX_SESSION_RATE: "off", AGENTBOX_MAX_SESSIONS: "100000", AGENTBOX_MAX_SESSIONS_PER_CLIENT: "100000" },
  });
  try {
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    const ids: string[] = [];
    for (let i = 0; i < SESSIONS; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, async () => {
          const res = await fetch(hub.url, { method: "POST", headers: both, body });
          await res.text();
          assert.equal(res.status, 200);
          ids.push(res.headers.get("mcp-session-id")!);
        }),
      );
    }
    // half of them closed by the client just before: the hub is still busy with their ends when told to stop
    for (let i = 0; i < SESSIONS / 2; i += 50) {
      await Promise.all(ids.slice(i, i + 50).map((id) => fetch(hub.url, { method: "DELETE", headers: { "mcp-session-id": id } }).then((r) => r.text())));
    }
    const exited = new Promise<[number | null, string | null]>((resolve) => hub.process.once("exit", (code, signal) => resolve([code, signal])));
    hub.process.kill("SIGTERM");
    // the hub's own forced exit comes at drain + 15 s; the children get 3 s to stop
    const limit = DRAIN_MS + 15_000 + 10_000;
    const outcome = await Promise.race([exited, new Promise<"still running">((r) => setTimeout(() => r("still running"), limit).unref())]);
    assert.deepEqual(outcome, [0, null], `the hub should have stopped cleanly within ${limit} ms:\n${hub.logs.slice(-5).join("\n")}`);
    assert.ok(hub.logs.some((l) => l.includes('"msg":"stopped"')));
  } finally {
    await hub.stop();
  }
});

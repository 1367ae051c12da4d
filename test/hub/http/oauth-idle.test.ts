// A person who goes away frees their place: with one place (maxTenants 1) and a second of idle
// period, a second person is refused while the first has a session open, gets in once the first
// closed it and idled, and the first one's processes are gone by then; the first comes back to the
// same uid and files. The timing itself is test/hub/tenants/people.test.ts, on mock timers.
import assert from "node:assert/strict";
import fs from "node:fs";
import { after, before, describe, test } from "node:test";
import { startHub, type TestHub } from "../../helpers/hub.js";
import { startProvider, type TestProvider } from "../../helpers/oidc.js";
import { until } from "../../helpers/wait.js";

const asRoot = process.getuid?.() === 0;
const skip = asRoot ? false : "needs root: people get uids of their own only when the hub can switch users";
const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
};

/** The uids of every live process on the machine (the test runs as root, as the hub does). */
function processUids(): number[] {
  return fs.readdirSync("/proc").flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      const status = fs.readFileSync(`/proc/${entry}/status`, "utf8");
      if (/^State:\s+Z/m.test(status)) return [];
      return [Number(/^Uid:\s+(\d+)/m.exec(status)![1])];
    } catch {
      return []; // ended meanwhile
    }
  });
}

describe("a person who is away frees their place", { skip }, () => {
  let provider: TestProvider;
  let hub: TestHub;

  before(async () => {
    provider = await startProvider();
    hub = await startHub({
      servers: ["terminal"],
      env: { AGENTBOX_OAUTH_ISSUER: provider.issuer, AGENTBOX_OAUTH_MAX_TENANTS: "1", AGENTBOX_OAUTH_IDLE_SECONDS: "1" },
    });
  });
  after(async () => {
    await hub?.stop();
    await provider?.stop();
  });

  const post = (token: string, body: unknown, sessionId?: string) =>
    fetch(hub.url, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json",
        Authorization: `Bearer ${token}`,
        ...(sessionId ? { "Mcp-Session-Id": sessionId, "MCP-Protocol-Version": "2025-11-25" } : {}),
      },
      body: JSON.stringify(body),
    });
  /** A session of the person's: its id, or the refusal's status. */
  const open = async (token: string) => {
    const res = await post(token, INIT);
    await res.body?.cancel();
    return res.status === 200 ? res.headers.get("mcp-session-id")! : res.status;
  };
  const close = async (token: string, sessionId: string) => {
    const res = await fetch(hub.url, { method: "DELETE", headers: { Authorization: `Bearer ${token}`, "Mcp-Session-Id": sessionId } });
    assert.equal(res.status, 200);
  };
  const sh = async (token: string, sessionId: string, command: string) => {
    const res = await post(token, { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "terminal_exec", arguments: { command } } }, sessionId);
    const body = (await res.json()) as { result: { content: Array<{ text: string }> } };
    return body.result.content.map((c) => c.text).join("\n");
  };

  test("the second person gets in once the first has closed their session and idled; the first comes back to the same uid and files", async () => {
    const ada = await provider.clientToken("ada", hub.url);
    const grace = await provider.clientToken("grace", hub.url);
    const adaSession = await open(ada);
    assert.equal(typeof adaSession, "string");
    const out = await sh(ada, adaSession as string, "echo kept > mine.txt; (setsid sleep 1000 >/dev/null 2>&1 &); id -u");
    const uid = Number(/--- stdout ---\n(\d+)/.exec(out)?.[1]);
    assert.ok(uid > 0, out);
    assert.ok(processUids().includes(uid), "ada's background process runs");
    // ada's session holds her place, however long she stays
    assert.equal(await open(grace), 503);

    await close(ada, adaSession as string);
    const graceSession = await until("grace gets ada's place", async () => {
      const opened = await open(grace);
      return typeof opened === "string" ? opened : undefined;
    });
    assert.ok(!processUids().includes(uid), "nothing of ada's runs any more");
    assert.equal(await open(ada), 503, "and now grace holds the place");

    await close(grace, graceSession);
    const back = await until("ada comes back", async () => {
      const opened = await open(ada);
      return typeof opened === "string" ? opened : undefined;
    });
    const again = await sh(ada, back, "id -u; cat mine.txt");
    assert.match(again, new RegExp(`--- stdout ---\\n${uid}\\nkept\\n`));
  });
});

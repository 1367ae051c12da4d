// A client session's interpreters end after AGENTBOX_CODE_IDLE_MS without use, but never while
// one of them is running: a long cell holds its session busy (servers/lib SessionStore.use).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { isAlive } from "../../servers/lib/proc-table.js";
import { until } from "../helpers/wait.js";
import { run, openCodeHub, type CodeHub } from "./harness.js";

const IDLE_MS = 500;

describe("code sessions and the idle time", () => {
  let hub: CodeHub;
  let client: Client;

  before(async () => ({ hub, client } = await openCodeHub(["code"], { AGENTBOX_CODE_IDLE_MS: String(IDLE_MS) })));
  after(() => hub?.stop());

  test("a cell running past the idle time keeps its interpreter and state", async () => {
    await run(client, "python", "kept = 41");
    const long = await run(client, "python", `import time\ntime.sleep(${(3 * IDLE_MS) / 1000})\nkept + 1`);
    assert.equal(long.text, "42");
  });

  test("an interpreter left alone past the idle time is freed", async () => {
    await run(client, "python", "forgotten = 1");
    const listed = await client.callTool({ name: "code_sessions", arguments: {} });
    const sessions = (listed.structuredContent as { sessions: Array<{ language: string; name: string; pid: number | null }> }).sessions;
    const pid = sessions.find((s) => s.language === "python" && s.name === "default")?.pid;
    assert.ok(pid, JSON.stringify(sessions));
    // the sweep runs every idle time and frees the session, ending its interpreter; asking the
    // server would touch the session, so watch the process instead
    await until("the idle interpreter to be freed", () => !isAlive(pid));
    const after = await run(client, "python", "'forgotten' in globals()");
    assert.equal(after.text, "False");
  });
});

// One hub at a time serves a workspace's tenants (hub/tenants/workspace-lock.ts). A second hub on
// the same workspace, started as root, used to end the first one's servers in its start-up sweep
// (their uids are derived from the workspace), even though it then failed to listen.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { WorkspaceHeld, WorkspaceLock, startTimeOf } from "../../../hub/tenants/workspace-lock.js";
import { call, refusalOf, startHub, tempDir, textOf } from "../../helpers/hub.js";
import { otherProcess } from "../../helpers/processes.js";

const stateDir = tempDir("agentbox-state-");
const workspace = tempDir("agentbox-ws-");
const lockFile = WorkspaceLock.fileFor(stateDir, workspace);
after(() => fs.rmSync(stateDir, { recursive: true, force: true }));

function heldBy(pid: number, startTime: number | undefined): void {
  fs.writeFileSync(lockFile, JSON.stringify({ pid, startTime, workspace, since: "2026-11-29T00:00:00.000Z" }));
}

describe("the lock file", () => {
  test("a live hub's lock refuses the workspace, naming the hub; once that hub has ended, its lock is taken over", async () => {
    const other = await otherProcess();
    heldBy(other.pid!, startTimeOf(other.pid!));
    assert.throws(
      () => WorkspaceLock.acquire(stateDir, workspace),
      (err: unknown) =>
        err instanceof WorkspaceHeld &&
        err.holder.pid === other.pid &&
        err.message.includes(workspace) &&
        /Stop that hub first, or start this one with another workspace \(AGENTBOX_WORKSPACE\)/.test(err.message),
    );
    assert.equal(JSON.parse(fs.readFileSync(lockFile, "utf8")).pid, other.pid, "the refused hub left the lock alone");
    other.kill("SIGKILL");
    await new Promise((resolve) => other.once("exit", resolve));
    const lock = WorkspaceLock.acquire(stateDir, workspace);
    assert.equal(JSON.parse(fs.readFileSync(lockFile, "utf8")).pid, process.pid);
    lock.release();
    assert.equal(fs.existsSync(lockFile), false);
  });

  test("a lock whose pid another process has now (its start time differs), or that cannot be read, is taken over", async () => {
    const other = await otherProcess();
    try {
      heldBy(other.pid!, 1);
      WorkspaceLock.acquire(stateDir, workspace).release();
      fs.writeFileSync(lockFile, "{ not json");
      WorkspaceLock.acquire(stateDir, workspace).release();
    } finally {
      other.kill("SIGKILL");
    }
  });

  test("a hub gives up only its own lock: one another hub took over meanwhile stays", async () => {
    const lock = WorkspaceLock.acquire(stateDir, workspace);
    const other = await otherProcess();
    try {
      heldBy(other.pid!, startTimeOf(other.pid!));
      lock.release();
      assert.equal(JSON.parse(fs.readFileSync(lockFile, "utf8")).pid, other.pid);
    } finally {
      other.kill("SIGKILL");
      fs.rmSync(lockFile, { force: true });
    }
  });
});

const terminalPid = async (origin: string): Promise<number | null | undefined> => {
  const status = (await (await fetch(`${origin}/`)).json()) as { servers: Array<{ name: string; pid: number | null }> };
  return status.servers.find((s) => s.name === "terminal")?.pid;
};

describe("two hubs as root on one workspace", { skip: process.getuid?.() === 0 ? false : "needs root: per-tenant uids are what the hubs would share" }, () => {
  test("the second is refused before it touches anything: the first one's servers and sessions go on", async () => {
    const env = { AGENTBOX_STATE_DIR: stateDir };
    const shared = tempDir("agentbox-ws-");
    fs.chmodSync(shared, 0o755);
    const first = await startHub({ servers: ["terminal"], workspace: shared, env });
    try {
      const client = await first.connect();
      const pid = await terminalPid(first.origin);
      assert.ok(pid);
      // the README's start command, run again in another terminal (here on a free port)
      // (a second hub that starts after all is stopped at once: it would keep the test's process alive)
      const refused = await refusalOf({ servers: ["terminal"], workspace: shared, env });
      assert.match(refused, /hub exited with 1/);
      assert.ok(refused.includes("refusing to start: another hub serves this workspace") && refused.includes(`pid ${first.pid}`), refused);
      assert.equal(await terminalPid(first.origin), pid, "the first hub's terminal server is the one it started");
      process.kill(pid, 0);
      const run = await call(client, "terminal_exec", { command: "echo still-here" });
      assert.match(textOf(run), /still-here/);
      await client.close();
    } finally {
      await first.stop();
    }
    // the lock went with the hub that stopped, and one killed outright leaves a lock the next hub takes over
    const second = await startHub({ servers: ["terminal"], workspace: shared, env });
    second.process.kill("SIGKILL");
    await new Promise((resolve) => second.process.once("exit", resolve));
    const third = await startHub({ servers: ["terminal"], workspace: shared, env });
    await third.stop();
    fs.rmSync(shared, { recursive: true, force: true });
  });

  test("a state folder the hub cannot make is named as the reason it does not start, not another hub", async () => {
    const notAFolder = path.join(stateDir, "a-file");
    fs.writeFileSync(notAFolder, "");
    const refused = await refusalOf({ servers: [], env: { AGENTBOX_STATE_DIR: path.join(notAFolder, "state") } });
    assert.match(refused, /hub exited with 1/);
    assert.match(refused, /cannot start: the workspace's lock cannot be made.*AGENTBOX_STATE_DIR must be a folder the hub can write/);
    assert.doesNotMatch(refused, /another hub serves/);
  });
});

test("the lock is named by the workspace's resolved path", () => {
  assert.equal(WorkspaceLock.fileFor(stateDir, path.join(workspace, "x", "..")), lockFile);
  assert.notEqual(WorkspaceLock.fileFor(stateDir, `${workspace}-other`), lockFile);
});

// No two hubs on one machine give a tenant the same uid (hub/tenants/uid-locks.ts). Two hubs on
// other workspaces whose tenants met on a uid (an explicit one, or two derived ones) used to kill
// each other's servers in their sweeps: the browser server of one test file's hub was SIGKILLed
// by another file's, mid-call.
import assert from "node:assert/strict";
import { spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { startTimeOf } from "../../../hub/tenants/lock-file.js";
import { UidHeld, UidLocks } from "../../../hub/tenants/uid-locks.js";
import { derivedUid } from "../../../hub/tenants/tenants.js";
import { bundled } from "../../../hub/config/config.js";
import { call, refusalOf, startHub, tempDir, textOf } from "../../helpers/hub.js";
import { ended, otherProcess } from "../../helpers/processes.js";

const lockDir = tempDir("agentbox-uid-locks-");
const claimDir = tempDir("agentbox-uid-claims-");
after(() => [lockDir, claimDir].forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));
const alice = { name: "alice", folder: "/srv/mine/alice" };

function heldBy(uid: number, holder: ChildProcess, tenant = "bob"): void {
  const record = { pid: holder.pid, startTime: startTimeOf(holder.pid!), since: "2026-11-29T00:00:00.000Z", uid, tenant, workspace: "/srv/other" };
  fs.writeFileSync(UidLocks.fileFor(lockDir, uid), JSON.stringify(record));
}

describe("the uid locks", () => {
  test("a uid a live hub holds is refused, naming that hub, its tenant and workspace; once it has ended the uid is taken over", async () => {
    const other = await otherProcess();
    heldBy(41001, other);
    const locks = new UidLocks(lockDir, "/srv/mine", claimDir);
    assert.equal(locks.holderOf(41001)?.pid, other.pid);
    assert.throws(
      () => locks.take(41001, alice),
      (err: unknown) =>
        err instanceof UidHeld &&
        err.holder.pid === other.pid &&
        /Tenant 'alice' would run as uid 41001, which another agentbox hub \(pid \d+, .*\) gives its tenant 'bob' on the workspace \/srv\/other/.test(
          err.message,
        ) &&
        /derived from this workspace and the name 'alice'.*give 'alice' a uid of its own \("uid" in its config entry\)/.test(err.message),
    );
    assert.throws(
      () => locks.take(41001, { name: "default", folder: "/srv/mine" }, { explicit: true, setting: "AGENTBOX_TENANT_UID" }),
      /Give 'default' another uid \(AGENTBOX_TENANT_UID\), or stop that hub/,
    );
    other.kill("SIGKILL");
    await ended(other);
    assert.equal(locks.holderOf(41001), undefined);
    locks.take(41001, alice);
    const record = JSON.parse(fs.readFileSync(UidLocks.fileFor(lockDir, 41001), "utf8"));
    assert.deepEqual([record.pid, record.tenant, record.workspace], [process.pid, "alice", "/srv/mine"]);
    assert.equal(locks.holderOf(41001), undefined, "a uid this hub holds is not another's");
    locks.release(41001);
    assert.equal(fs.existsSync(UidLocks.fileFor(lockDir, 41001)), false);
  });

  test("a hub's tenants' uids are taken all or none: a refusal gives back what was taken", async () => {
    const other = await otherProcess();
    try {
      heldBy(41003, other);
      const locks = new UidLocks(lockDir, "/srv/mine", claimDir);
      const tenants = [
        { ...alice, uid: 41002, source: { explicit: false, setting: "" } },
        { name: "carol", folder: "/srv/mine/carol", uid: 41003, source: { explicit: true, setting: "" } },
      ];
      assert.throws(
        () => locks.takeAll(tenants),
        (err: unknown) => err instanceof UidHeld && err.tenant === "carol" && err.uid === 41003,
      );
      assert.equal(fs.existsSync(UidLocks.fileFor(lockDir, 41002)), false, "alice's uid was given back");
      other.kill("SIGKILL");
      await ended(other);
      locks.takeAll(tenants);
      assert.equal(fs.existsSync(UidLocks.fileFor(lockDir, 41002)), true);
      locks.releaseAll();
      assert.deepEqual(
        [41002, 41003].map((uid) => fs.existsSync(UidLocks.fileFor(lockDir, uid))),
        [false, false],
      );
    } finally {
      other.kill("SIGKILL");
    }
  });
});

const terminalPid = async (origin: string, key: string): Promise<number | null | undefined> => {
  const status = (await (await fetch(`${origin}/`, { headers: { Authorization: `Bearer ${key}` } })).json()) as {
    servers: Array<{ name: string; pid: number | null }>;
  };
  return status.servers.find((s) => s.name === "terminal")?.pid;
};

const KEY = (name: string) => `${name}-key-${"0123456789abcdef".repeat(2)}`;

describe("two hubs as root on other workspaces whose tenants share a uid", { skip: process.getuid?.() === 0 ? false : "needs root: per-tenant uids" }, () => {
  test("the second is refused before its start-up sweep: the first one's server is not killed and goes on answering", async () => {
    const uid = 47000 + (process.pid % 1000);
    const optionsOf = (tenant: string) => ({
      servers: ["terminal"],
      config: { tenants: { [tenant]: { apiKey: KEY(tenant), uid }, [`${tenant}-other`]: { apiKey: KEY(`${tenant}-other`) } } },
    });
    const first = await startHub(optionsOf("alice"));
    try {
      const client = await first.connect({ headers: { Authorization: `Bearer ${KEY("alice")}` } });
      assert.match(textOf(await call(client, "terminal_exec", { command: "id -u" })), new RegExp(`\\b${uid}\\b`));
      const pid = await terminalPid(first.origin, KEY("alice"));
      assert.ok(pid);
      const refused = await refusalOf(optionsOf("bob"));
      assert.match(refused, /hub exited with 1/);
      assert.ok(refused.includes("refusing to start: a tenant's uid is another hub's") && refused.includes(`pid ${first.pid}`), refused);
      assert.ok(refused.includes(`Tenant 'bob' would run as uid ${uid}`) && refused.includes("its tenant 'alice'"), refused);
      assert.doesNotMatch(refused, /killed tenant processes/, "the refused hub swept nothing");
      process.kill(pid, 0);
      assert.match(textOf(await call(client, "terminal_exec", { command: "echo still-here" })), /still-here/);
      assert.doesNotMatch(first.logs.join("\n"), /child exited/, "the first hub's server never went down");
      await client.close();
    } finally {
      await first.stop();
    }
    // the uid went with the hub that stopped
    const next = await startHub(optionsOf("bob"));
    await next.stop();
  });

  test("a hub whose derived uid another hub holds is refused, naming the setting; the test helper starts it again with a uid of its own", async () => {
    const workspace = tempDir("agentbox-ws-");
    fs.chmodSync(workspace, 0o755);
    const derived = derivedUid("default", workspace);
    // another hub's single tenant, given that uid by AGENTBOX_TENANT_UID
    const holder = await startHub({ servers: ["terminal"], env: { AGENTBOX_TENANT_UID: String(derived) } });
    try {
      const hub = await startHub({ servers: ["terminal"], workspace });
      try {
        const refusal = hub.logs.find((line) => line.includes("refusing to start"));
        assert.equal(refusal, undefined, "the hub the helper returns is the one started again");
        const client = await hub.connect();
        const id = /--- stdout ---\n(\d+)/.exec(textOf(await call(client, "terminal_exec", { command: "id -u" })));
        assert.ok(id && Number(id[1]) !== derived && Number(id[1]) >= 100_000, `the tenant runs as ${id?.[1]}`);
        await client.close();
      } finally {
        await hub.stop();
      }
      // what the hub says when nobody starts it again
      const config = path.join(tempDir("agentbox-cfg-"), "agentbox.json");
      fs.writeFileSync(config, JSON.stringify({ mcpServers: {} }));
      const refused = spawnSync(process.execPath, [bundled("hub"), "--port", "0", "--config", config], {
        env: { ...process.env, AGENTBOX_WORKSPACE: workspace },
        encoding: "utf8",
        timeout: 30_000,
      });
      assert.equal(refused.status, 1, refused.stdout + refused.stderr);
      assert.match(
        refused.stdout + refused.stderr,
        /The uid is derived from this workspace and the name 'default'.*give 'default' a uid of its own \(AGENTBOX_TENANT_UID\)/,
      );
    } finally {
      await holder.stop();
    }
  });
});

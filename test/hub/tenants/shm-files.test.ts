// A tenant's files in /dev/shm (hub/tenants/shm-files.ts): POSIX shared memory and semaphores, in a
// RAM file system every tenant shares (Docker's is 64 MiB). Before, one tenant's `dd` filled it and
// every other tenant's multiprocessing.Lock() failed with ENOSPC, past the session and past the hub.
// Now a tenant with a live session keeps its share (the oldest files that fit), the rest of its
// entries go, and all of them once it has no live session, when the hub stops and before it listens.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { loadConfig, type HubConfig } from "../../../hub/config/config.js";
import type { Isolation } from "../../../hub/tenants/isolation.js";
import { SHM_DIR, sweepShmFiles } from "../../../hub/tenants/shm-files.js";
import { buildTenants } from "../../../hub/tenants/tenants.js";
import { call, startHub, tempDir, textOf } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";

const MIB = 1024 * 1024;
const asRoot = process.getuid?.() === 0;
const KEY_A = `alice-${randomBytes(16).toString("hex")}`;
const KEY_B = `bob-${randomBytes(16).toString("hex")}`;
const auth = (key: string) => ({ headers: { Authorization: `Bearer ${key}` } });
const exists = (file: string) => fs.lstatSync(file, { throwIfNoEntry: false }) !== undefined;

test("the share: AGENTBOX_SHARED_MEMORY_MIB for all, limits.sharedMemoryMiB per tenant, else 90% of /dev/shm shared equally", () => {
  const scratch = tempDir("agentbox-shm-config-");
  const configPath = path.join(scratch, "agentbox.json");
  fs.writeFileSync(configPath, JSON.stringify({ tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B, limits: { sharedMemoryMiB: 8 } } } }));
  const isolation: Isolation = { mode: "uid", summary: "test", canDropBoundingSet: false };
  const build = (env: NodeJS.ProcessEnv) => {
    const config: HubConfig = loadConfig(
      { config: configPath },
      { AGENTBOX_WORKSPACE: path.join(scratch, "ws"), AGENTBOX_STATE_DIR: path.join(scratch, "state"), ...env },
    );
    return Object.fromEntries(buildTenants(config, isolation).map((t) => [t.name, t.identity!.sharedMemoryBytes]));
  };
  assert.deepEqual(build({ AGENTBOX_SHARED_MEMORY_MIB: "2" }), { alice: 2 * MIB, bob: 8 * MIB });
  const { bsize, blocks } = fs.statfsSync(SHM_DIR);
  assert.equal(build({}).alice, Math.floor((0.9 * bsize * blocks) / 2));
  assert.throws(() => build({ AGENTBOX_SHARED_MEMORY_MIB: "lots" }), /AGENTBOX_SHARED_MEMORY_MIB/);
  fs.writeFileSync(configPath, JSON.stringify({ limits: { sharedMemoryMiB: 0 } }));
  assert.throws(() => build({}), /sharedMemoryMiB/);
  fs.rmSync(scratch, { recursive: true });
});

describe("a tenant's files in a shared memory folder, swept as the tenant runs the sweep", () => {
  // run as this test's own uid: the "tenant" is the test itself, its command runs unchanged
  const me = process.getuid!();
  const asSelf = (command: string, args: string[]) => ({ command, args });
  const write = (file: string, bytes: number) => fs.writeFileSync(file, Buffer.alloc(bytes, 7));

  test("a live tenant keeps the oldest files that fit in its share; newer files, folders and links go", async () => {
    const dir = tempDir("agentbox-shm-");
    const made = ["old", "folder", "newer", "link"].map((name) => path.join(dir, name));
    write(made[0], 3 * MIB);
    await new Promise((r) => setTimeout(r, 20)); // ctimes a clock tick apart
    fs.mkdirSync(made[1]);
    write(path.join(made[1], "inside"), 2 * MIB);
    await new Promise((r) => setTimeout(r, 20));
    write(made[2], 2 * MIB);
    fs.symlinkSync(made[0], made[3]);
    const removals = await sweepShmFiles([{ name: "me", uid: me, shareBytes: 4 * MIB, live: true, asTenant: asSelf }], dir);
    assert.deepEqual(
      made.map((file) => exists(file)),
      [true, false, false, false],
    );
    assert.equal(removals.length, 1);
    assert.equal(removals[0].entries, 3);
    assert.ok(removals[0].heldBytes >= 7 * MIB, `held ${removals[0].heldBytes}`);
    // under its share now: nothing more goes
    assert.deepEqual(await sweepShmFiles([{ name: "me", uid: me, shareBytes: 4 * MIB, live: true, asTenant: asSelf }], dir), []);
    assert.ok(exists(made[0]));
    // without a live session, everything
    const last = await sweepShmFiles([{ name: "me", uid: me, shareBytes: 4 * MIB, live: false, asTenant: asSelf }], dir);
    assert.deepEqual(last, [{ tenant: "me", live: false, entries: 1, heldBytes: last[0].heldBytes, shareBytes: 0 }]);
    assert.deepEqual(fs.readdirSync(dir), []);
    fs.rmSync(dir, { recursive: true });
  });

  test("a folder nested deeper than any path can name is removed whole", async () => {
    const dir = tempDir("agentbox-shm-deep-");
    // 600 levels of 8 characters: 5,400 bytes of path, past PATH_MAX (4,096)
    const nest =
      "import os, sys\nos.chdir(sys.argv[1])\nfor _ in range(600):\n    os.mkdir('dddddddd'); os.chdir('dddddddd')\nopen('f', 'wb').write(bytes(1 << 20))\n";
    const made = spawnSync("/usr/bin/python3", ["-c", nest, dir]);
    assert.equal(made.status, 0, String(made.stderr));
    const removals = await sweepShmFiles([{ name: "me", uid: me, shareBytes: 0, live: false, asTenant: asSelf }], dir);
    assert.equal(removals[0]?.entries, 1);
    assert.deepEqual(fs.readdirSync(dir), []);
    fs.rmSync(dir, { recursive: true });
  });
});

// a file in /dev/shm as an agent's command leaves it: `head -c` of zeros, the way `dd` fills it
const fill = (file: string, mib: number) => `head -c ${mib * MIB} /dev/zero > ${file}`;

describe("a tenant's files in /dev/shm", { skip: asRoot ? false : "needs root: tenants' uids" }, () => {
  test("a tenant over its share keeps the oldest that fit, and cannot reach another's file through a link; all go with its last session, and every tenant's when the hub stops", async () => {
    const tag = randomBytes(6).toString("hex");
    const at = (name: string) => path.join(SHM_DIR, `agentbox-test-${tag}-${name}`);
    const [alice1, aliceFolder, alice2, aliceLink, bobs] = [at("alice-1"), at("alice-folder"), at("alice-2"), at("alice-link"), at("bob")];
    const hub = await startHub({
      servers: ["terminal"],
      config: { tenants: { alice: { apiKey: KEY_A, limits: { sharedMemoryMiB: 4 } }, bob: { apiKey: KEY_B } } },
      env: { AGENTBOX_SWEEP_MS: "500" },
    });
    try {
      const alice = await hub.connect(auth(KEY_A));
      const bob = await hub.connect(auth(KEY_B));
      assert.match(textOf(await call(bob, "terminal_exec", { command: `${fill(bobs, 3)} && echo done` })), /done/);
      // the attack, in one command: more than the share, a folder, and a link to bob's file
      const attack = [
        fill(alice1, 3),
        "sleep 0.05",
        `mkdir ${aliceFolder}`,
        fill(`${aliceFolder}/inside`, 3),
        "sleep 0.05",
        fill(alice2, 2),
        `ln -s ${bobs} ${aliceLink}`,
        "echo done",
      ];
      assert.match(textOf(await call(alice, "terminal_exec", { command: attack.join(" && ") })), /done/);
      const over = await until("alice's newest entries to go, and the hub to say so", () =>
        !exists(aliceFolder) && !exists(alice2) && !exists(aliceLink) ? hub.logs.find((l) => l.includes("beyond the tenant's share")) : undefined,
      );
      assert.ok(over.includes('"tenant":"alice"') && over.includes(`"shareBytes":${4 * MIB}`), over);
      assert.ok(exists(alice1), "her oldest file, within her share, stays");
      assert.equal(fs.statSync(bobs).size, 3 * MIB, "bob's file is untouched");

      await (alice.transport as StreamableHTTPClientTransport).terminateSession();
      await alice.close();
      const left = await until("alice's last file to go once her session ended", () =>
        !exists(alice1) ? hub.logs.find((l) => l.includes("its sessions left") && l.includes('"tenant":"alice"')) : undefined,
      );
      assert.match(left, /removed files in \/dev\/shm its sessions left/);
      assert.ok(exists(bobs), "bob's session lives: his file stays");
      await bob.close();
    } finally {
      await hub.stop();
    }
    assert.ok(!exists(bobs), "nothing of a tenant outlives the hub");
    await until("the hub to say what it removed when it stopped", () =>
      hub.logs.some((l) => l.includes("removed tenant files in /dev/shm when the hub stopped") && l.includes('"tenant":"bob"')),
    );
  });

  test("a tenant at its process cap, with folders it made unreadable and processes racing the remover, still loses what is beyond its share", async () => {
    const prefix = path.join(SHM_DIR, `agentbox-test-${randomBytes(6).toString("hex")}-alice`);
    const hub = await startHub({
      servers: ["terminal"],
      config: { tenants: { alice: { apiKey: KEY_A, limits: { sharedMemoryMiB: 4, processes: 64 } }, bob: { apiKey: KEY_B } } },
      env: { AGENTBOX_SWEEP_MS: "500" },
    });
    try {
      const alice = await hub.connect(auth(KEY_A));
      const out = textOf(await call(alice, "terminal_exec", { command: `/usr/bin/python3 - ${prefix} <<'PY'\n${CAPPED_ATTACK}PY` }));
      assert.match(out, /at the cap after \d+ forks/, out);
      assert.match(out, /removed: folder True, newest True/, out);
      assert.ok(exists(`${prefix}-oldest`), "her oldest file, within her share, stays");
      assert.ok(hub.logs.some((l) => l.includes("beyond the tenant's share") && l.includes('"tenant":"alice"')));
    } finally {
      await hub.stop();
    }
  });

  test("what an earlier run left in /dev/shm under a tenant's uid is removed before the hub listens", async () => {
    const uid = 62_000 + (process.pid % 1000);
    const file = path.join(SHM_DIR, `agentbox-test-${randomBytes(6).toString("hex")}`);
    const left = spawnSync("setpriv", [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", "sh", "-c", fill(file, 1)]);
    assert.equal(left.status, 0, String(left.stderr));
    const hub = await startHub({ servers: ["terminal"], env: { AGENTBOX_TENANT_UID: String(uid) } });
    try {
      assert.ok(!exists(file));
      assert.ok(hub.logs.some((l) => l.includes("removed tenant files in /dev/shm left by an earlier run")));
    } finally {
      await hub.stop();
    }
  });
});

// The attack as an agent's command runs it: more than the share, in a folder made unreadable at two
// depths; a process that chmods it back to 000 as fast as it can, and one that sets the CPU limit of
// every process of its uid running a script it did not start (the hub's remover) to nothing; then
// forks until the tenant's process cap refuses, and waits for the hub.
const CAPPED_ATTACK = `import os, resource, sys, time
prefix = sys.argv[1]
def write(name, mib):
    with open(prefix + name, "wb") as f: f.write(bytes(mib << 20))
write("-oldest", 3)
time.sleep(0.05)
folder = prefix + "-folder"
os.makedirs(folder + "/inner")
write("-folder/inner/f", 3)
os.chmod(folder + "/inner", 0)
os.chmod(folder, 0)
time.sleep(0.05)
write("-newest", 2)
if os.fork() == 0:
    while True:
        try: os.chmod(folder, 0)
        except OSError: pass
if os.fork() == 0:
    while True:
        for name in os.listdir("/proc"):
            try:
                if os.stat("/proc/" + name).st_uid != os.getuid(): continue
                with open("/proc/" + name + "/cmdline", "rb") as f: line = f.read().split(b"\\0")
                if b"-e" in line: resource.prlimit(int(name), resource.RLIMIT_CPU, (0, 0))
            except (OSError, ValueError): pass
forks = 0
while True:
    try: pid = os.fork()
    except OSError: break
    if pid == 0:
        time.sleep(600)
        os._exit(0)
    forks += 1
print("at the cap after", forks, "forks", flush=True)
deadline = time.time() + 45
while time.time() < deadline and (os.path.lexists(folder) or os.path.lexists(prefix + "-newest")):
    time.sleep(0.1)
print(f"removed: folder {not os.path.lexists(folder)}, newest {not os.path.lexists(prefix + '-newest')}")
`;

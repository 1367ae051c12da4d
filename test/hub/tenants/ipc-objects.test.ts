// IPC objects a tenant's commands leave in the kernel (hub/tenants/ipc-objects.ts). Before, a
// command could fill shared memory, detach and exit, and the memory stayed taken past its session
// and past the hub (a tenant's 128 MB were still there after the hub stopped); one tenant could take
// all 256 POSIX message queues the machine has, so no other tenant could make one. Now they are
// removed once the tenant has no live session, before the hub listens and when it stops, and those
// beyond a tenant's share of a kind while it lives; one given away to root by its owner is still its
// creator's.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { IPC_SHARES, ipcObjectsOf, overShare, queuesVisible, type IpcObject } from "../../../hub/tenants/ipc-objects.js";
import { call, startHub, tempDir, textOf } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";

// the unit tests read no queues of the machine's
const noQueues = "/nonexistent/mqueue";

describe("the /proc/sysvipc tables", () => {
  test("are read by their headers' names, whatever the kind; rows that are not whole, and other uids' objects, are skipped", async () => {
    const tables: Record<string, string> = {
      "/proc/sysvipc/shm": [
        "       key      shmid perms                  size  cpid  lpid nattch   uid   gid  cuid  cgid      atime      dtime      ctime                   rss                  swap",
        "         0          2   600               8388608 32403 32403      0 40777 40777 40777 40777 1795985349 1795985349 1795985349               8388608                     0",
        "         0          3   600               1048576 32403 32403      0     0 40777 40777 40777 1795985349 1795985349 1795985349               1048576                     0",
        "         0          4   600               1048576 32403 32403      0 40999 40999 40999 40999 1795985349 1795985349 1795985349               1048576                     0",
        "  garbage",
        "",
      ].join("\n"),
      "/proc/sysvipc/sem":
        "       key      semid perms      nsems   uid   gid  cuid  cgid      otime      ctime\n         0          5   600          1 40777 40777 40777 40777          0 1795985349\n",
      "/proc/sysvipc/msg":
        "       key      msqid perms      cbytes       qnum lspid lrpid   uid   gid  cuid  cgid      stime      rtime      ctime\n" +
        "         0          7   600           0          0     0     0 40778 40778 40777 40777          0          0 1795985349\n",
    };
    const readTable = async (file: string) => tables[file];
    assert.deepEqual(await ipcObjectsOf(new Set([40777]), { readTable, queueDir: noQueues }), [
      { kind: "shm", id: 2, uid: 40777, cuid: 40777, bytes: 8388608, changed: 1795985349 },
      { kind: "shm", id: 3, uid: 0, cuid: 40777, bytes: 1048576, changed: 1795985349 },
      { kind: "sem", id: 5, uid: 40777, cuid: 40777, bytes: 0, changed: 1795985349 },
      { kind: "msg", id: 7, uid: 40778, cuid: 40777, bytes: 0, changed: 1795985349 },
    ]);
    assert.deepEqual(await ipcObjectsOf(new Set([40777]), { readTable: async () => "no such columns\n1 2 3\n", queueDir: noQueues }), []);
    assert.deepEqual(
      await ipcObjectsOf(new Set([40777]), { readTable: () => Promise.reject(new Error("ENOENT")), queueDir: noQueues }),
      [],
      "a kernel without System V IPC",
    );
  });

  test("a full table is read in slices, other work running between them", async () => {
    const header = "       key      semid perms      nsems   uid   gid  cuid  cgid      otime      ctime";
    const rows = Array.from({ length: 32_000 }, (_, i) => `         0 ${i}   600          1 40777 40777 40777 40777          0 1795985349`);
    let turns = 0;
    const counting = setInterval(() => turns++, 0);
    const found = await ipcObjectsOf(new Set([40777]), {
      readTable: async (file) => (file.endsWith("sem") ? [header, ...rows].join("\n") : ""),
      queueDir: noQueues,
    });
    clearInterval(counting);
    assert.equal(found.length, 32_000);
    assert.ok(turns >= 2, `timers ran ${turns} times while it read`);
  });

  test("a tenant's objects beyond its share of a kind are the newest of that kind", () => {
    const of = (kind: "shm" | "sem", id: number, changed: number): IpcObject => ({ kind, id, uid: 1, cuid: 1, bytes: 0, changed });
    const queue = (name: string, changed: number): IpcObject => ({ kind: "mqueue", path: `/dev/mqueue/${name}`, uid: 1, cuid: 1, bytes: 0, changed });
    const own = [of("shm", 9, 30), of("sem", 4, 10), of("shm", 7, 20), of("shm", 8, 20), of("shm", 5, 10), of("sem", 3, 40), queue("b", 2.5), queue("a", 2.25)];
    assert.deepEqual(overShare(own, { shm: 2, sem: 2, msg: 2, mqueue: 1 }).map(named), ["shm 8", "shm 9", "mqueue /dev/mqueue/b"]);
  });
});

describe("POSIX message queues", () => {
  test("are the files of the queue folder, by their owner; folders and links are no queues", async () => {
    const dir = tempDir("agentbox-mqueue-");
    const uid = process.getuid!();
    for (const name of ["q1", "q2"]) fs.writeFileSync(path.join(dir, name), "QSIZE:0\n");
    fs.mkdirSync(path.join(dir, "folder"));
    fs.symlinkSync(path.join(dir, "q1"), path.join(dir, "link"));
    const found = await ipcObjectsOf(new Set([uid]), { readTable: async () => "", queueDir: dir });
    assert.deepEqual(found.map(named).sort(), [`mqueue ${path.join(dir, "q1")}`, `mqueue ${path.join(dir, "q2")}`]);
    assert.ok(found.every((o) => o.uid === uid && o.cuid === uid && o.changed > 1e9));
    assert.deepEqual(await ipcObjectsOf(new Set([uid + 1]), { readTable: async () => "", queueDir: dir }), [], "another uid's");
    fs.rmSync(dir, { recursive: true });
  });

  test("cannot be listed where their file system is not mounted", () => {
    assert.equal(queuesVisible(tempDir("agentbox-not-mqueue-")), false);
    assert.equal(queuesVisible("/nonexistent/mqueue"), false);
  });
});

const named = (o: IpcObject) => `${o.kind} ${o.kind === "mqueue" ? o.path : o.id}`;

const asRoot = process.getuid?.() === 0;
const KEY_A = `alice-${randomBytes(16).toString("hex")}`;
const KEY_B = `bob-${randomBytes(16).toString("hex")}`;
const auth = (key: string) => ({ headers: { Authorization: `Bearer ${key}` } });
const uidOf = async (client: Client) => Number(/--- stdout ---\n(\d+)/.exec(textOf(await call(client, "terminal_exec", { command: "id -u" })))![1]);

/** A hub serving alice and bob, sweeping every half second, with a session of each. */
async function aliceAndBob() {
  const hub = await startHub({
    servers: ["terminal"],
    config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } },
    env: { AGENTBOX_SWEEP_MS: "500" },
  });
  const alice = await hub.connect(auth(KEY_A));
  const bob = await hub.connect(auth(KEY_B));
  return { hub, alice, bob, aliceUid: await uidOf(alice), bobUid: await uidOf(bob) };
}

/** The client's session ended as a client ends it (DELETE), so the hub knows at once. */
async function endSession(client: Client): Promise<void> {
  await (client.transport as StreamableHTTPClientTransport).terminateSession();
  await client.close();
}

/** A Python script run as `uid` outside any hub, as an earlier run's tenant would have: its output. */
function runAs(uid: number, script: string, ...args: string[]): string {
  const left = spawnSync("setpriv", [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", "/usr/bin/python3", script, ...args], { encoding: "utf8" });
  assert.equal(left.status, 0, left.stderr);
  return left.stdout;
}

// the objects as an agent's command makes them: a shared memory segment filled and left, one given
// away to root (IPC_SET: an owner may name any owner; the creator stays), a semaphore set, a message queue
const MAKER = `import ctypes, json, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmat.restype = ctypes.c_void_p
libc.shmdt.argtypes = [ctypes.c_void_p]
libc.shmctl.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
IPC_CREAT, IPC_SET, IPC_STAT, MB = 0o1000, 1, 2, 1024 * 1024
def check(value, what):
    if value is None or value == -1 or value == ctypes.c_void_p(-1).value:
        sys.exit(f"{what} failed: errno {ctypes.get_errno()}")
    return value
def segment(size, fill):
    sid = check(libc.shmget(0, size, IPC_CREAT | 0o600), "shmget")
    addr = check(libc.shmat(sid, None, 0), "shmat")
    ctypes.memset(addr, fill, size)
    libc.shmdt(addr)
    return sid
if sys.argv[1] == "make":
    kept = segment(8 * MB, 0x5A)
    given = segment(MB, 1)
    buf = ctypes.create_string_buffer(256)
    check(libc.shmctl(given, IPC_STAT, buf), "IPC_STAT")
    ctypes.c_uint32.from_buffer(buf, 4).value = 0
    check(libc.shmctl(given, IPC_SET, buf), "IPC_SET")
    sem = check(libc.semget(0, 1, IPC_CREAT | 0o600), "semget")
    msg = check(libc.msgget(0, IPC_CREAT | 0o600), "msgget")
    print("IPC " + json.dumps({"shm": kept, "given": given, "sem": sem, "msg": msg}))
elif sys.argv[1] == "many":
    ids = [check(libc.semget(0, 1, IPC_CREAT | 0o600), "semget") for _ in range(int(sys.argv[2]))]
    print("MANY " + json.dumps(ids))
else:
    addr = check(libc.shmat(int(sys.argv[2]), None, 0), "shmat")
    print("byte", ctypes.c_ubyte.from_address(addr).value)
`;

interface Made {
  shm: number;
  given: number;
  sem: number;
  msg: number;
}

describe("a tenant's System V IPC objects", { skip: asRoot ? false : "needs root: tenants' uids" }, () => {
  let maker = "";
  before(() => {
    const dir = tempDir("agentbox-ipc-");
    fs.chmodSync(dir, 0o755);
    maker = path.join(dir, "ipc.py");
    fs.writeFileSync(maker, MAKER, { mode: 0o644 });
  });
  after(() => {
    if (maker) fs.rmSync(path.dirname(maker), { recursive: true, force: true });
  });

  const make = async (client: Client): Promise<Made> => {
    const out = textOf(await call(client, "terminal_exec", { command: `/usr/bin/python3 ${maker} make` }));
    const json = /IPC (\{.*\})/.exec(out);
    assert.ok(json, out);
    return JSON.parse(json[1]);
  };
  const present = async (uid: number) => (await ipcObjectsOf(new Set([uid]))).map(named).sort();
  const expected = (made: Made) => [`msg ${made.msg}`, `sem ${made.sem}`, `shm ${made.given}`, `shm ${made.shm}`].sort();
  test("live while their tenant has a session, the next command uses them; removed once its last session ends, and every tenant's when the hub stops", async () => {
    const { hub, alice, bob, aliceUid, bobUid } = await aliceAndBob();
    try {
      const alices = await make(alice);
      const bobs = await make(bob);
      assert.deepEqual(await present(aliceUid), expected(alices));
      // a later command of the session finds what an earlier one left
      assert.match(textOf(await call(alice, "terminal_exec", { command: `/usr/bin/python3 ${maker} read ${alices.shm}` })), /byte 90/);

      await endSession(alice);
      // the hub logs once ipcrm has run: the objects can be gone a moment before the line arrives
      const removed = await until("alice's objects to be removed, and the hub to say so", async () =>
        (await present(aliceUid)).length === 0 ? hub.logs.find((l) => l.includes("removed IPC objects its sessions left")) : undefined,
      );
      assert.ok(
        removed && removed.includes('"tenant":"alice"') && removed.includes('"sharedMemory":2') && removed.includes(`"bytes":${9 * 1024 * 1024}`),
        removed,
      );
      assert.deepEqual(await present(bobUid), expected(bobs), "bob's session lives: his stay");
      await bob.close();
    } finally {
      await hub.stop();
    }
    assert.deepEqual(await present(bobUid), [], "nothing of a tenant outlives the hub");
    // its last lines can come in just after its exit
    await until("the hub to say what it removed when it stopped", () =>
      hub.logs.some((l) => l.includes("removed tenant IPC objects when the hub stopped") && l.includes('"tenant":"bob"')),
    );
  });

  test("a tenant with a live session holding more than its share of a kind keeps the oldest; the newest beyond are removed", async () => {
    const hub = await startHub({ servers: ["terminal"], env: { AGENTBOX_SWEEP_MS: "500" } });
    try {
      const client = await hub.connect();
      const uid = await uidOf(client);
      const out = textOf(await call(client, "terminal_exec", { command: `/usr/bin/python3 ${maker} many ${IPC_SHARES.sem + 40}` }));
      const made: number[] = JSON.parse(/MANY (\[.*\])/.exec(out)![1]);
      // a sweep may have come while the command was still making them: what all sweeps removed adds up
      const removed = () =>
        hub.logs
          .filter((l) => l.includes("beyond the tenant's share"))
          .map((l) => JSON.parse(l).semaphoreSets as number)
          .reduce((sum, n) => sum + n, 0);
      await until(
        "the sweeps to take the tenant down to its share, and say so",
        async () => (await present(uid)).length === IPC_SHARES.sem && removed() === 40,
      );
      const left = await present(uid);
      assert.ok(left.includes(`sem ${made[0]}`) && !left.includes(`sem ${made.at(-1)}`), "the first made stays, the last goes");
      await client.close();
    } finally {
      await hub.stop();
    }
  });

  test("what an earlier run left under a tenant's uid is removed before the hub listens", async () => {
    const uid = 49_000 + (process.pid % 1000);
    const made: Made = JSON.parse(/IPC (\{.*\})/.exec(runAs(uid, maker, "make"))![1]);
    assert.deepEqual(await present(uid), expected(made));
    const hub = await startHub({ servers: ["terminal"], env: { AGENTBOX_TENANT_UID: String(uid) } });
    try {
      assert.deepEqual(await present(uid), []);
      assert.ok(hub.logs.some((l) => l.includes("removed tenant IPC objects left by an earlier run") && l.includes('"sharedMemory":2')));
    } finally {
      await hub.stop();
    }
  });
});

// POSIX message queues as an agent's command makes them: the smallest there are (one message of
// one byte, about a hundred bytes of the uid's RLIMIT_MSGQUEUE each), so the machine's count of
// queues (256), not the tenant's memory, is what runs out
const QUEUES = `import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p]
class Attr(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long), ("msgsize", ctypes.c_long), ("curmsgs", ctypes.c_long), ("reserved", ctypes.c_long * 4)]
made = []
for i in range(int(sys.argv[2])):
    name = "/%s-%d" % (sys.argv[1], i)
    fd = libc.mq_open(name.encode(), os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600, ctypes.byref(Attr(0, 1, 1, 0)))
    if fd < 0:
        print("STOPPED " + os.strerror(ctypes.get_errno()))
        break
    os.close(fd)
    made.append("/dev/mqueue" + name)
print("QUEUES " + json.dumps(made))
`;

describe(
  "a tenant's POSIX message queues",
  { skip: !asRoot ? "needs root: tenants' uids" : !queuesVisible() ? "needs /dev/mqueue mounted (Docker mounts it)" : false },
  () => {
    let script = "";
    before(() => {
      const dir = tempDir("agentbox-mq-");
      fs.chmodSync(dir, 0o755);
      script = path.join(dir, "queues.py");
      fs.writeFileSync(script, QUEUES, { mode: 0o644 });
    });
    after(() => {
      if (script) fs.rmSync(path.dirname(script), { recursive: true, force: true });
    });

    const unique = () => `agentbox-test-${randomBytes(6).toString("hex")}`;
    const makeQueues = async (client: Client, count: number) => {
      const out = textOf(await call(client, "terminal_exec", { command: `/usr/bin/python3 ${script} ${unique()} ${count}` }));
      const json = /QUEUES (\[.*\])/.exec(out);
      assert.ok(json, out);
      return { made: JSON.parse(json[1]) as string[], stopped: /STOPPED (.*)/.exec(out)?.[1] };
    };
    const queues = async (uid: number) =>
      (await ipcObjectsOf(new Set([uid])))
        .filter((o) => o.kind === "mqueue")
        .map(named)
        .sort();
    const asListed = (paths: string[]) => paths.map((p) => `mqueue ${p}`).sort();

    test("go with their tenant's last session, and every tenant's when the hub stops", async () => {
      const { hub, alice, bob, aliceUid, bobUid } = await aliceAndBob();
      try {
        const alices = await makeQueues(alice, 2);
        const bobs = await makeQueues(bob, 1);
        assert.deepEqual(await queues(aliceUid), asListed(alices.made));

        await endSession(alice);
        const removed = await until("alice's queues to be removed, and the hub to say so", async () =>
          (await queues(aliceUid)).length === 0 ? hub.logs.find((l) => l.includes("removed IPC objects its sessions left")) : undefined,
        );
        assert.ok(removed.includes('"tenant":"alice"') && removed.includes('"posixMessageQueues":2'), removed);
        assert.deepEqual(await queues(bobUid), asListed(bobs.made), "bob's session lives: his stay");
        await bob.close();
      } finally {
        await hub.stop();
      }
      assert.deepEqual(await queues(bobUid), [], "nothing of a tenant outlives the hub");
      await until("the hub to say what it removed when it stopped", () =>
        hub.logs.some((l) => l.includes("removed tenant IPC objects when the hub stopped") && l.includes('"posixMessageQueues":1')),
      );
    });

    test("a tenant that takes every queue the machine has is taken down to its share, and another tenant can then make one", async () => {
      const { hub, alice, bob, aliceUid } = await aliceAndBob();
      try {
        // the attack: queues until the kernel has none left for anyone (its limit is well below 1,024)
        const taken = await makeQueues(alice, 1024);
        assert.equal(taken.stopped, "No space left on device", "the machine's queues ran out");
        assert.ok(taken.made.length > IPC_SHARES.mqueue, `made ${taken.made.length}`);
        const removed = () =>
          hub.logs
            .filter((l) => l.includes("beyond the tenant's share"))
            .map((l) => JSON.parse(l).posixMessageQueues as number)
            .reduce((sum, n) => sum + n, 0);
        await until(
          "the sweeps to take alice down to her share, and say so",
          async () => (await queues(aliceUid)).length === IPC_SHARES.mqueue && removed() === taken.made.length - IPC_SHARES.mqueue,
        );
        const left = await queues(aliceUid);
        assert.ok(left.includes(`mqueue ${taken.made[0]}`) && !left.includes(`mqueue ${taken.made.at(-1)}`), "the first made stays, the last goes");
        const bobs = await makeQueues(bob, 1);
        assert.equal(bobs.stopped, undefined, "bob can make a queue again");
        assert.equal(bobs.made.length, 1);
        await Promise.all([alice.close(), bob.close()]);
      } finally {
        await hub.stop();
      }
    });

    test("what an earlier run left under a tenant's uid is removed before the hub listens", async () => {
      const uid = 61_000 + (process.pid % 1000);
      const made: string[] = JSON.parse(/QUEUES (\[.*\])/.exec(runAs(uid, script, unique(), "1"))![1]);
      assert.deepEqual(await queues(uid), asListed(made));
      const hub = await startHub({ servers: ["terminal"], env: { AGENTBOX_TENANT_UID: String(uid) } });
      try {
        assert.deepEqual(await queues(uid), []);
        assert.ok(hub.logs.some((l) => l.includes("removed tenant IPC objects left by an earlier run") && l.includes('"posixMessageQueues":1')));
      } finally {
        await hub.stop();
      }
    });
  },
);

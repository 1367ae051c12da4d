// When memory runs short, the hub ends the largest processes of the tenant holding the most, never
// one of its servers (hub/tenants/memory-guard.ts): memory is capped per process, not per tenant,
// and the kernel's OOM killer would otherwise end the largest process anywhere, the hub included.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { loadConfig } from "../../../hub/config/config.js";
import { defaultReserve, memoryLeft, victims, type HeldMemory } from "../../../hub/tenants/memory-guard.js";
import { listProcesses, realUid } from "../../../servers/lib/proc-table.js";
import { memoryReliefNote } from "../../../servers/lib/memory-relief.js";
import { call, startHub, tempDir, textOf } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

test("what is left: the machine's MemAvailable and free swap, or less where the cgroup's limit leaves less (its inactive page cache counted free)", (t) => {
  const dir = tempDir("agentbox-memory-");
  t.after(() => fs.rmSync(dir, { recursive: true }));
  const meminfo = path.join(dir, "meminfo");
  fs.writeFileSync(
    meminfo,
    `MemTotal:       ${16 * 1024 * 1024} kB\nMemFree:        ${1024 * 1024} kB\nMemAvailable:   ${9 * 1024 * 1024} kB\nSwapTotal:      ${2 * 1024 * 1024} kB\nSwapFree:       ${1024 * 1024} kB\n`,
  );
  const cgroup = path.join(dir, "cgroup");
  fs.mkdirSync(cgroup);
  assert.deepEqual(memoryLeft(meminfo, cgroup), { availableBytes: 10 * GIB, totalBytes: 16 * GIB });
  // a container started with --memory 4g: 3.5 GiB charged, a quarter of it inactive page cache
  fs.writeFileSync(path.join(cgroup, "memory.max"), `${4 * GIB}\n`);
  fs.writeFileSync(path.join(cgroup, "memory.current"), `${3.5 * GIB}\n`);
  fs.writeFileSync(path.join(cgroup, "memory.stat"), `anon ${3 * GIB}\nfile ${0.5 * GIB}\ninactive_file ${0.25 * GIB}\n`);
  assert.deepEqual(memoryLeft(meminfo, cgroup), { availableBytes: 0.75 * GIB, totalBytes: 4 * GIB });
  // no limit: the machine's
  fs.writeFileSync(path.join(cgroup, "memory.max"), "max\n");
  assert.deepEqual(memoryLeft(meminfo, cgroup), { availableBytes: 10 * GIB, totalBytes: 16 * GIB });
  // cgroup v1's memory controller, as Docker on an older host mounts it: 3 GiB, 2.5 charged
  const v1 = path.join(dir, "v1");
  fs.mkdirSync(path.join(v1, "memory"), { recursive: true });
  fs.writeFileSync(path.join(v1, "memory", "memory.limit_in_bytes"), `${3 * GIB}\n`);
  fs.writeFileSync(path.join(v1, "memory", "memory.usage_in_bytes"), `${2.5 * GIB}\n`);
  fs.writeFileSync(path.join(v1, "memory", "memory.stat"), `cache 1\ninactive_file ${0.125 * GIB}\ntotal_inactive_file ${0.125 * GIB}\n`);
  assert.deepEqual(memoryLeft(meminfo, v1), { availableBytes: 0.625 * GIB, totalBytes: 3 * GIB });
  fs.writeFileSync(path.join(v1, "memory", "memory.limit_in_bytes"), "9223372036854771712\n");
  assert.deepEqual(memoryLeft(meminfo, v1), { availableBytes: 10 * GIB, totalBytes: 16 * GIB }, "v1's way of saying no limit");
  assert.equal(memoryLeft(path.join(dir, "none"), path.join(dir, "none")), undefined);
  assert.equal(defaultReserve(16 * GIB), Math.floor((16 * GIB) / 10));
  assert.equal(defaultReserve(64 * GIB), 2 * GIB);
  assert.equal(defaultReserve(GIB), 256 * MIB);
});

test("the reserve: AGENTBOX_MEMORY_RESERVE_MIB in MiB, or off; else the default for the memory found at start", (t) => {
  const scratch = tempDir("agentbox-memory-config-");
  t.after(() => fs.rmSync(scratch, { recursive: true }));
  const reserve = (value?: string) =>
    loadConfig({}, { AGENTBOX_WORKSPACE: scratch, ...(value === undefined ? {} : { AGENTBOX_MEMORY_RESERVE_MIB: value }) }).memoryReserveMiB;
  assert.equal(reserve("512"), 512);
  assert.equal(reserve("off"), "off");
  assert.equal(reserve(), undefined);
  assert.throws(() => reserve("lots"), /AGENTBOX_MEMORY_RESERVE_MIB \(or off\) must be a positive whole number/);
});

test("a command that ran while the hub ended its tenant's processes is told why; one before or after is not", (t) => {
  const dir = tempDir("agentbox-relief-");
  t.after(() => fs.rmSync(dir, { recursive: true }));
  const file = path.join(dir, "memory.json");
  assert.equal(memoryReliefNote(0, file), undefined, "no relief yet");
  const at = Date.now() - 1000;
  fs.writeFileSync(file, JSON.stringify({ at, pids: [41, 42], endedMiB: 900, tenantMiB: 2100 }));
  assert.match(
    memoryReliefNote(at - 5000, file)!,
    /held the most \(2100 MiB\): the hub ended its largest processes \(pids 41, 42, 900 MiB\)[^]*Use less memory at once/,
  );
  assert.equal(memoryReliefNote(at + 1, file), undefined, "a command started after it");
  fs.writeFileSync(file, "{not json");
  assert.equal(memoryReliefNote(0, file), undefined);
});

test("the victims: the largest processes of the tenant holding the most that are not its servers, until they cover the need, one tenant at a time", () => {
  const p = (pid: number, uid: number, mib: number): HeldMemory => ({ pid, uid, rssBytes: mib * MIB });
  // alice holds 1,000 MiB (her server 300), bob 700 (his server 100), carol 5,000 all in her server
  const held = [p(10, 1, 300), p(11, 1, 500), p(12, 1, 200), p(20, 2, 100), p(21, 2, 600), p(30, 3, 5000)];
  const servers = new Map([
    [1, new Set([10])],
    [2, new Set([20])],
    [3, new Set([30])],
  ]);
  const pids = (need: number) => victims(held, servers, need * MIB).map((v) => v.pid);
  assert.deepEqual(pids(100), [11], "carol holds the most but only in her server: alice's largest");
  assert.deepEqual(pids(600), [11, 12]);
  assert.deepEqual(pids(5000), [11, 12], "one tenant at a time: the next look sees what ending hers freed");
  assert.deepEqual(victims([p(10, 1, 300)], servers, GIB), [], "nothing but servers: nothing to end");
});

const available = () => Number(/^MemAvailable:\s+(\d+) kB/m.exec(fs.readFileSync("/proc/meminfo", "latin1"))?.[1]) * 1024;
// a reserve 2.5 GiB under what is free now: what alice and bob take below reaches it in seconds
const roomy = process.getuid?.() === 0 && available() > 6 * GIB;
const heldBy = (uid: number) => listProcesses().reduce((sum, p) => sum + (realUid(p.pid) === uid ? p.rssBytes : 0), 0);

// Alice spreads hers over four processes of 256 MiB, and once bob holds his 700 MiB in one, they grow
// by 32 MiB a tenth of a second up to 800 MiB each, 3.2 GiB for the four: when memory runs short
// each is smaller than his, and the kernel's OOM killer would end bob's, the largest. `go`: the file
// bob makes once he holds his.
const ALICE = (go: string) =>
  `import os, time\nfor _ in range(3):\n    if os.fork() == 0: break\nheld = [b"\\x01" * (256 << 20)]\nwhile not os.path.exists("${go}"):\n    time.sleep(0.05)\nfor _ in range(17):\n    held.append(b"\\x01" * (32 << 20))\n    time.sleep(0.1)\nprint("took all", flush=True)\ntime.sleep(3)\n`;
const BOB = (go: string) =>
  `import time\nheld = b"\\x02" * (700 << 20)\nopen("${go}", "w").close()\nprint("bob holds 700 MiB", flush=True)\ntime.sleep(10)\nprint("bob still holds his")\n`;
const python = (script: string) => `/usr/bin/python3 - <<'PY'\n${script}PY\nwait`;

test(
  "memory short: alice's processes, the tenant holding the most, are ended, not bob's larger one",
  { skip: roomy ? false : "needs root (tenants' uids) and 6 GiB of memory free" },
  async (t) => {
    const reserveMiB = Math.floor((available() - 2.5 * GIB) / MIB);
    const [keyA, keyB] = [`alice-${randomBytes(16).toString("hex")}`, `bob-${randomBytes(16).toString("hex")}`];
    const go = `/tmp/agentbox-memory-go-${randomBytes(6).toString("hex")}`;
    const hub = await startHub({
      servers: ["terminal"],
      env: { AGENTBOX_MEMORY_RESERVE_MIB: String(reserveMiB) },
      config: { tenants: { alice: { apiKey: keyA }, bob: { apiKey: keyB } } },
    });
    t.after(async () => {
      await hub.stop();
      fs.rmSync(go, { force: true });
    });
    const alice = await hub.connect({ headers: { Authorization: `Bearer ${keyA}` } });
    const bob = await hub.connect({ headers: { Authorization: `Bearer ${keyB}` } });
    const uidOf = async (client: typeof alice) => Number(/--- stdout ---\n(\d+)/.exec(textOf(await call(client, "terminal_exec", { command: "id -u" })))![1]);
    const alicesUid = await uidOf(alice);
    const hers = call(alice, "terminal_exec", { command: python(ALICE(go)), timeoutMs: 60_000 });
    await until("alice to hold her first GiB", () => heldBy(alicesUid) > GIB);
    const his = textOf(await call(bob, "terminal_exec", { command: python(BOB(go)), timeoutMs: 60_000 }));
    const herText = textOf(await hers);
    assert.doesNotMatch(herText, /(took all[^]*){4}/, "not all of hers got all they asked for");
    assert.match(
      herText,
      /Memory ran short while this ran, and this tenant held the most \(\d+ MiB\): the hub ended its largest processes \(pids [\d, ]+, \d+ MiB\)/,
    );
    assert.match(his, /bob still holds his/, his);
    const ended = hub.logs.filter((l) => l.includes("memory was short")).map((l) => JSON.parse(l) as { tenant: string });
    assert.ok(ended.length > 0 && ended.every((e) => e.tenant === "alice"), JSON.stringify(ended));
  },
);

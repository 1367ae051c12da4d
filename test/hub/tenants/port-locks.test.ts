// Tenants of two hubs on one machine never share ports (hub/tenants/port-locks.ts). Every hub cut
// its tenants' blocks from the same span in config order, so the first tenant of each hub got the
// same block: bob, a tenant of another hub, could connect to alice's services and take her ports.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import type { ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { parsePortRange } from "../../../hub/config/network.js";
import { startTimeOf } from "../../../hub/tenants/lock-file.js";
import { assignPorts } from "../../../hub/tenants/network.js";
import { PortLocks } from "../../../hub/tenants/port-locks.js";
import { distRoot } from "../../../hub/config/config.js";
import { call, startHub, tempDir, textOf } from "../../helpers/hub.js";
import { ended, otherProcess } from "../../helpers/processes.js";
import { freePortIn, portsOf } from "../../helpers/tenant-ports.js";
import { startInTerminal } from "../previews/apps.js";

const lockDir = tempDir("agentbox-port-locks-");
after(() => fs.rmSync(lockDir, { recursive: true, force: true }));

/** `holder` holds ports low-high, as another hub's tenant. */
function heldBy(holder: ChildProcess, low: number, high: number): void {
  const record = { pid: holder.pid, startTime: startTimeOf(holder.pid!), since: "2026-11-29T00:00:00.000Z", low, high, tenant: "bob", workspace: "/srv/other" };
  fs.writeFileSync(path.join(lockDir, `ports-${low}-${high}.lock`), JSON.stringify(record));
}

describe("the port locks", () => {
  test("a block overlapping one a live hub holds is not claimed; once that hub has ended it is", async () => {
    const other = await otherProcess();
    heldBy(other, 62000, 62099);
    const locks = new PortLocks(lockDir, "/srv/mine");
    assert.equal(locks.claim({ low: 62050, high: 62149 }, "alice"), false);
    assert.equal(locks.holderOverlapping({ low: 62099, high: 62099 })?.pid, other.pid);
    assert.equal(locks.claim({ low: 62100, high: 62199 }, "alice"), true);
    assert.equal(locks.claim({ low: 62100, high: 62199 }, "alice"), true, "a block this hub holds is its own");
    other.kill("SIGKILL");
    await ended(other);
    const again = new PortLocks(lockDir, "/srv/third");
    assert.equal(again.claim({ low: 62000, high: 62099 }, "carol"), true);
    again.releaseAll();
    locks.releaseAll();
  });

  test("chosen blocks step past another hub's; a block the config names that another hub holds is refused by name", async () => {
    const other = await otherProcess();
    try {
      heldBy(other, 63000, 63099);
      heldBy(other, 63150, 63249);
      const locks = new PortLocks(lockDir, "/srv/mine");
      const claim = locks.claim.bind(locks);
      const region = { low: 63000, high: 63999 };
      const blocks = assignPorts([{ name: "alice" }, { name: "carol" }], region, 100, parsePortRange, claim);
      // 63100-63199 and 63200-63299 overlap the other hub's second block: alice gets the next block clear of both
      assert.deepEqual(blocks.get("alice"), { low: 63300, high: 63399 });
      assert.deepEqual(blocks.get("carol"), { low: 63400, high: 63499 });
      assert.throws(
        () => assignPorts([{ name: "dan", ports: "63050-63060" }], region, 100, parsePortRange, claim),
        /tenants\.dan\.ports \(63050-63060\) overlap ports another agentbox hub on this machine gives one of its tenants: choose other ports/,
      );
      // a span other hubs fill is named as the reason, not only its size
      assert.throws(
        () => assignPorts([{ name: "erin" }], { low: 63000, high: 63249 }, 100, parsePortRange, claim),
        /more than the tenants' ports 63000-63249 hold besides the blocks other agentbox hubs on this machine give their tenants/,
      );
      locks.releaseAll();
    } finally {
      other.kill("SIGKILL");
    }
  });
});

const KEY = (name: string) => `${name}-${randomBytes(16).toString("hex")}`;
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

describe(
  "two hubs as root, each with two tenants",
  { skip: process.getuid?.() === 0 ? false : "needs root: tenants are apart on the network under their own uids" },
  () => {
    test("bob, first tenant of the second hub, gets other ports than alice, and cannot reach her service", async () => {
      const keys = { alice: KEY("alice"), carol: KEY("carol"), bob: KEY("bob"), dan: KEY("dan") };
      const hubOf = (first: "alice" | "bob", second: "carol" | "dan") =>
        startHub({ servers: ["terminal"], config: { tenants: { [first]: { apiKey: keys[first] }, [second]: { apiKey: keys[second] } } } });
      const hubA = await hubOf("alice", "carol");
      const hubB = await hubOf("bob", "dan");
      try {
        const [alicePorts, bobPorts] = await Promise.all([portsOf(hubA, keys.alice), portsOf(hubB, keys.bob)]);
        assert.ok(alicePorts.high < bobPorts.low || bobPorts.high < alicePorts.low, `alice ${JSON.stringify(alicePorts)}, bob ${JSON.stringify(bobPorts)}`);
        const alice = await hubA.connect({ headers: auth(keys.alice) });
        const bob = await hubB.connect({ headers: auth(keys.bob) });
        const [port] = await freePortIn(alicePorts, 1);
        const secret = `alice-secret-${randomBytes(8).toString("hex")}`;
        const log = path.join(hubA.workspace, "alice", "accepted.log");
        const script = path.join(distRoot(), "test", "fixtures", "tenant-listener.js");
        await startInTerminal(alice, `${process.execPath} ${script} ${log} ${secret} tcp:127.0.0.1:${port}`, /LISTENING \d+/);
        const probe = `timeout 10 bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3' 2>&1; echo " [exit $?]"`;
        assert.match(textOf(await call(alice, "terminal_exec", { command: probe })), new RegExp(secret), "alice reaches her own service");
        const tried = textOf(await call(bob, "terminal_exec", { command: probe }));
        assert.doesNotMatch(tried, new RegExp(secret), tried);
        assert.match(tried, /Permission denied|refused/, tried);
        const accepted = fs.readFileSync(log, "utf8").trim().split("\n");
        assert.equal(accepted.length, 1, `only alice's own connection was accepted: ${accepted.join(" | ")}`);
        // nor can bob take a port of her block for himself
        const squat = textOf(
          await call(bob, "terminal_exec", {
            command: `python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', ${alicePorts.low})); print('bound')" 2>&1`,
          }),
        );
        assert.doesNotMatch(squat, /^bound/m, squat);
        await Promise.all([alice.close(), bob.close()]);
      } finally {
        await Promise.all([hubA.stop(), hubB.stop()]);
      }
    });
  },
);

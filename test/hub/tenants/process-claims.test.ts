// What the sweeper reads of a process and how the hub picks its addresses: a claim is found only
// whole and only under its exact name, an environment is read no further than its prefix, a
// process's owner comes from its status, and a port's holders from /proc/net.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs";
import net from "node:net";
import { describe, test } from "node:test";
import { bindAddresses, portHolders } from "../../../hub/http/listen.js";
import { claimIn, ENVIRON_PREFIX_BYTES, readClaims, readClaimsAsTenant } from "../../../hub/tenants/process-claims.js";
import { listOwners } from "../../../servers/lib/proc-table.js";
import { landlockAbi, planNetwork } from "../../../hub/tenants/network.js";
import { parsePortRange } from "../../../hub/config/network.js";
import { tenantCommand, type Tenant } from "../../../hub/tenants/tenants.js";
import type { Isolation } from "../../../hub/tenants/isolation.js";
import { until } from "../../helpers/wait.js";
import { sessionClaim, SESSION_CLAIM_ENV, withSessionClaim } from "../../../servers/lib/session-claim.js";

const claim = sessionClaim("a-token");
const environ = (...entries: string[]) => Buffer.from(entries.map((e) => `${e}\0`).join(""), "latin1");
const asSelf = (command: string, args: string[]) => ({ command, args });
const landlockSkip = () =>
  process.getuid?.() !== 0 ? "needs root to run as a tenant's uid" : (landlockAbi() ?? 0) < 4 ? "needs Landlock network rules" : false;

describe("session claims", () => {
  test("found first or after others, never as the tail of another name, cut short, or malformed", () => {
    assert.equal(claimIn(environ(`${SESSION_CLAIM_ENV}=${claim}`, "A=1")), claim);
    assert.equal(claimIn(environ("A=1", `${SESSION_CLAIM_ENV}=${claim}`)), claim);
    assert.equal(claimIn(environ(`X${SESSION_CLAIM_ENV}=${claim}`)), undefined);
    assert.equal(claimIn(Buffer.from(`${SESSION_CLAIM_ENV}=${claim}`)), undefined, "no NUL: cut by the prefix");
    assert.equal(claimIn(environ(`${SESSION_CLAIM_ENV}=implicit-alice-127.0.0.1`)), undefined);
  });

  test("the servers set it first and drop what a caller passed", () => {
    const env = withSessionClaim({ A: "1", [SESSION_CLAIM_ENV]: "forged" }, "a-token");
    assert.deepEqual(Object.entries(env), [
      [SESSION_CLAIM_ENV, claim],
      ["A", "1"],
    ]);
    assert.deepEqual(withSessionClaim({ [SESSION_CLAIM_ENV]: "forged" }, undefined), {});
  });

  test("a claim past the prefix of a huge environment is not read (and the read stops there)", async () => {
    const filler = "x".repeat(100_000);
    const early = spawn("sleep", ["30"], { env: { [SESSION_CLAIM_ENV]: claim, B1: filler, B2: filler }, stdio: "ignore" });
    const late = spawn("sleep", ["30"], { env: { B1: filler, B2: filler, [SESSION_CLAIM_ENV]: claim }, stdio: "ignore" });
    try {
      // "spawn" comes once the program runs (libuv returns from spawn after the exec), its environment in place
      await Promise.all([once(early, "spawn"), once(late, "spawn")]);
      // directly, and as a container without CAP_SYS_PTRACE does it, by a reader run as the tenant
      for (const read of [readClaims, readClaimsAsTenant]) {
        const claims = await read([early.pid!, late.pid!], asSelf);
        assert.equal(claims.get(early.pid!), claim);
        assert.equal(claims.get(late.pid!), undefined, `the claim lies beyond ${ENVIRON_PREFIX_BYTES} bytes`);
      }
    } finally {
      early.kill("SIGKILL");
      late.kill("SIGKILL");
    }
  });

  test("a reader run as the tenant finds the claims of the tenant's Landlock-confined servers' processes", { skip: landlockSkip() }, async () => {
    // as the sweeper does in a container without CAP_SYS_PTRACE, on a hub with several tenants: the
    // tenant's processes run in a server's Landlock domain, which a reader in a domain of its own
    // could not read (Landlock keeps ptrace, and so /proc/<pid>/environ, within a domain)
    const plan = planNetwork({
      network: { isolation: "auto", portsPerTenant: 100 },
      tenants: [{ name: "a" }, { name: "b" }],
      hubPort: 0,
      perTenantUids: true,
      parse: parsePortRange,
    });
    const uid = 20_000 + (process.pid % 10_000);
    const identity = {
      uid,
      gid: uid,
      processes: 4096,
      memoryBytes: 2 ** 33,
      disk: { budgetBytes: 2 ** 40, frozen: false, locked: false },
      sharedMemoryBytes: 2 ** 20,
    };
    const tenant: Tenant = { name: "a", identity, workspace: "/tmp", network: plan.tenants.get("a") };
    const isolation: Isolation = { mode: "uid", summary: "", canDropBoundingSet: false };
    const server = tenantCommand(tenant, isolation, "sleep", ["30"], { hubPort: undefined });
    const daemon = spawn(server.command, server.args, { env: { [SESSION_CLAIM_ENV]: claim, PATH: process.env.PATH }, stdio: "ignore" });
    try {
      await once(daemon, "spawn");
      // the wrappers exec one into the next: the claim is read once sleep runs as the tenant
      await until("the daemon to run as the tenant", () => fs.readFileSync(`/proc/${daemon.pid}/status`, "utf8").includes(`Uid:\t${uid}`));
      const claims = await readClaimsAsTenant([daemon.pid!], (command, args) => tenantCommand(tenant, isolation, command, args));
      assert.equal(claims.get(daemon.pid!), claim);
    } finally {
      daemon.kill("SIGKILL");
    }
  });

  test("the process table with owners, read asynchronously", async () => {
    const me = (await listOwners()).find((p) => p.pid === process.pid);
    assert.deepEqual(me && { uid: me.uid, ppid: me.ppid }, { uid: process.getuid!(), ppid: process.ppid });
  });
});

describe("the hub's addresses", () => {
  test("a loopback host has the other family as twin; every interface the other wildcard", () => {
    assert.deepEqual(bindAddresses("localhost"), { main: { host: "127.0.0.1" }, twins: [{ host: "::1" }] });
    assert.deepEqual(bindAddresses("127.0.0.1").twins, [{ host: "::1" }]);
    assert.deepEqual(bindAddresses("::1").twins, [{ host: "127.0.0.1" }]);
    assert.deepEqual(bindAddresses("0.0.0.0").twins, [{ host: "::", ipv6Only: true }]);
    assert.deepEqual(bindAddresses("::", true).twins, []);
    assert.deepEqual(bindAddresses("::", false).twins, [{ host: "0.0.0.0" }]);
    assert.deepEqual(bindAddresses("192.0.2.1").twins, []);
  });

  test("who holds a port: address, uid and pid", async () => {
    const v4 = net.createServer();
    const v6 = net.createServer();
    await new Promise<void>((resolve) => v4.listen({ host: "127.0.0.1", port: 0 }, resolve));
    try {
      const { port } = v4.address() as net.AddressInfo;
      const hasV6 = await new Promise<boolean>((resolve) => v6.once("error", () => resolve(false)).listen({ host: "::1", port }, () => resolve(true)));
      const mine = { uid: process.getuid!(), pids: [process.pid] };
      const expected = [{ address: "127.0.0.1", ...mine }, ...(hasV6 ? [{ address: "[::1]", ...mine }] : [])];
      assert.deepEqual(portHolders(port), expected);
    } finally {
      v4.close();
      v6.close();
    }
  });
});

// How the hub plans tenants' ports (hub/tenants/network.ts): blocks in config order or as named,
// the ports each tenant may connect to, and what it says where the kernel offers no mechanism.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, test } from "node:test";
import { parsePortRange } from "../../../hub/config/network.js";
import { ConfigError } from "../../../hub/config/schema.js";
import { assignPorts, planNetwork, portsWithout, type PlanInput } from "../../../hub/tenants/network.js";
import { startHub } from "../../helpers/hub.js";

const EPHEMERAL = { low: 32768, high: 60999 };
const two = [{ name: "alice" }, { name: "bob" }];
const input = (over: Partial<PlanInput> = {}): PlanInput => ({
  network: { isolation: "auto", portsPerTenant: 100 },
  tenants: two,
  hubPort: 8080,
  perTenantUids: true,
  parse: parsePortRange,
  abi: () => 7,
  ephemeral: () => EPHEMERAL,
  ...over,
});

describe("network plan", () => {
  test("blocks come in config order above the ephemeral range; a tenant may pin its own", () => {
    const blocks = assignPorts([{ name: "a" }, { name: "b", ports: "61000-61049" }, { name: "c" }], { low: 61000, high: 65535 }, 100, parsePortRange);
    assert.deepEqual(Object.fromEntries(blocks), {
      b: { low: 61000, high: 61049 },
      a: { low: 61050, high: 61149 },
      c: { low: 61150, high: 61249 },
    });
  });

  test("a server may connect anywhere but the ephemeral range and other tenants' blocks; its own block and the hub's port stay open", () => {
    const plan = planNetwork(input());
    const alice = plan.tenants.get("alice")!;
    assert.deepEqual(alice.ports, { low: 61000, high: 61099 });
    const line = alice.confine(45_000);
    assert.deepEqual(line.slice(1, 3), ["--bind", "61000-61099"]);
    assert.equal(line[4], "1-32767,61000-61099,45000");
    assert.ok(line.includes("--scope-abstract-unix"));
    assert.equal(
      portsWithout(
        [
          { low: 10, high: 20 },
          { low: 15, high: 30 },
        ],
        [],
      ),
      "1-9,31-65535",
    );
    assert.equal(plan.network, "isolated");
    assert.equal(plan.warning, undefined);
  });

  test("one tenant has nothing to be kept from: no confinement", () => {
    const plan = planNetwork(input({ tenants: [{ name: "solo" }] }));
    assert.equal(plan.network, "isolated");
    assert.equal(plan.tenants.size, 0);
  });

  test("without a mechanism the hub says what is missing and what to do, and confines nothing", () => {
    for (const [abi, why] of [
      [undefined, /helper .* is not built[^]*C compiler/],
      [0, /no Landlock[^]*Linux 6\.7/],
      [3, /ABI 3\) has no network rules/],
    ] as const) {
      const plan = planNetwork(input({ abi: () => abi }));
      assert.equal(plan.network, "shared");
      assert.match(plan.warning ?? "", why);
      assert.equal(plan.tenants.size, 0);
    }
    const partial = planNetwork(input({ abi: () => 5 }));
    assert.equal(partial.network, "shared");
    assert.match(partial.warning ?? "", /abstract UNIX sockets[^]*ABI 6/);
    assert.equal(partial.tenants.get("bob")!.confine(1).includes("--scope-abstract-unix"), false);
  });

  test("settings that cannot hold are refused with what to change", () => {
    const refused = (over: Partial<PlanInput>, message: RegExp) =>
      assert.throws(
        () => planNetwork(input(over)),
        (e: Error) => e instanceof ConfigError && message.test(e.message),
      );
    refused({ network: { isolation: "auto", ports: { low: 40000, high: 41000 }, portsPerTenant: 100 } }, /overlap the kernel's ephemeral range/);
    refused({ network: { isolation: "auto", ports: { low: 61000, high: 61150 }, portsPerTenant: 100 } }, /widen network\.ports/);
    refused({ hubPort: 61010 }, /hub's port 61010 lies within/);
    refused(
      {
        tenants: [
          { name: "a", ports: "61000-61100" },
          { name: "b", ports: "61100-61200" },
        ],
      },
      /overlaps tenant 'a'/,
    );
    refused({ tenants: [{ name: "a", ports: "20000-20099" }, { name: "b" }] }, /must lie within the tenants' ports/);
    assert.throws(() => parsePortRange("70000-1", "AGENTBOX_TENANT_PORTS"), /AGENTBOX_TENANT_PORTS must be a port range/);
  });
});

describe("network isolation off", { skip: process.getuid?.() === 0 ? false : "needs root: several tenants need per-tenant uids" }, () => {
  test("the hub starts, logs one warn line and reports the network shared", async () => {
    const key = randomBytes(16).toString("hex");
    const hub = await startHub({
      servers: ["file"],
      env: { AGENTBOX_NETWORK_ISOLATION: "off" },
      config: { tenants: { alice: { apiKey: `a${key}` }, bob: { apiKey: `b${key}` } } },
    });
    try {
      const status = await (await fetch(`${hub.origin}/`, { headers: { Authorization: `Bearer a${key}` } })).json();
      assert.equal(status.isolation.network, "shared");
      const warnings = hub.logs.filter((line) => line.includes('"warn"') && line.includes("network: tenants can connect"));
      assert.equal(warnings.length, 1, hub.logs.join("\n"));
      assert.match(warnings[0], /AGENTBOX_NETWORK_ISOLATION=off/);
    } finally {
      await hub.stop();
    }
  });
});

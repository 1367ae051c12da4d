// The pure parts of hub/tenants/tenants.ts: derived uids, key lookup, what a tenant's servers inherit
// from the hub's environment, and the traversal check of a workspace's ancestors.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import type { HubConfig } from "../../../hub/config/config.js";
import type { Isolation } from "../../../hub/tenants/isolation.js";
import { buildTenants, derivedUid, firstUntraversable, tenantEnv, tenantForKey } from "../../../hub/tenants/tenants.js";

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "tenants-unit-"));
fs.chmodSync(scratch, 0o755);
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

const uidIsolation: Isolation = { mode: "uid", summary: "test", canDropBoundingSet: false };

function tenants(keys: Record<string, string>) {
  const config = {
    workspace: path.join(scratch, "ws"),
    stateDir: path.join(scratch, "state"),
    limits: {},
    tenants: Object.entries(keys).map(([name, apiKey]) => ({ name, apiKey })),
  } as unknown as HubConfig;
  return buildTenants(config, uidIsolation);
}

test("a derived uid is stable, in 20000-59999, and differs by name and by workspace", () => {
  const uid = derivedUid("alice", "/srv/ws");
  assert.equal(derivedUid("alice", "/srv/ws"), uid);
  assert.equal(derivedUid("alice", "/srv/./ws/"), uid, "the same folder spelled otherwise");
  const uids = new Set<number>();
  for (let i = 0; i < 200; i++) {
    const u = derivedUid(`tenant-${i}`, "/srv/ws");
    assert.ok(Number.isInteger(u) && u >= 20_000 && u < 60_000, String(u));
    uids.add(u);
  }
  assert.ok(uids.size > 190, "names spread over the range");
  assert.notEqual(derivedUid("alice", "/srv/other"), uid);
});

test("a key finds its own tenant and nothing else does", () => {
  const all = tenants({ alice: "key-alice-0123456789", bob: "key-bob-0123456789" });
  assert.equal(tenantForKey(all, "key-alice-0123456789")?.name, "alice");
  assert.equal(tenantForKey(all, "key-bob-0123456789")?.name, "bob");
  for (const wrong of ["", "key-alice", "key-alice-0123456789 ", "KEY-ALICE-0123456789", "key-alice-01234567890"]) {
    assert.equal(tenantForKey(all, wrong), undefined, JSON.stringify(wrong));
  }
  // a keyless tenant is never found by a key, not even an empty one
  assert.equal(tenantForKey([{ name: "open", workspace: scratch }], ""), undefined);
});

test("a tenant's environment drops the hub's secrets and any value holding a tenant's key", () => {
  const [alice] = tenants({ alice: "key-alice-0123456789", bob: "key-bob-0123456789" });
  const env = tenantEnv(alice, ["key-alice-0123456789", "key-bob-0123456789", "short"], {
    PATH: "/usr/bin",
    HOME: "/root",
    NPM_CONFIG_CACHE: "/root/.npm",
    ELSEWHERE: "/rootless",
    AGENTBOX_API_KEY: "anything",
    AGENTBOX_TENANTS: "{}",
    COPY: "key-bob-0123456789",
    URL: "https://x/?token=key-alice-0123456789&y",
    SHORT_EXACT: "short",
    SHORT_INSIDE: "not-short-at-all",
    LANG: "C.UTF-8",
  });
  for (const gone of ["AGENTBOX_API_KEY", "AGENTBOX_TENANTS", "COPY", "URL", "SHORT_EXACT", "NPM_CONFIG_CACHE"]) assert.equal(env[gone], undefined, gone);
  // a short secret only matches whole values: it would otherwise drop every variable holding its letters
  assert.equal(env.SHORT_INSIDE, "not-short-at-all");
  assert.equal(env.ELSEWHERE, "/rootless", "only paths inside the hub's home are dropped, not ones sharing its prefix");
  assert.equal(env.PATH, "/usr/bin");
  assert.equal(env.LANG, "C.UTF-8");
  assert.equal(env.AGENTBOX_WORKSPACE, alice.workspace);
  assert.equal(env.HOME, alice.home);
  assert.equal(env.TMPDIR, alice.tmp);
  assert.equal(env.USER, "alice");
  assert.ok(!Object.values(env).some((v) => v.includes("key-")), "no key survives in any variable");
});

test("the first ancestor others cannot pass is named; none when all can", () => {
  const top = path.join(scratch, "walk");
  fs.mkdirSync(top, { mode: 0o755 });
  const shut = path.join(top, "shut");
  const target = path.join(shut, "inner", "ws");
  fs.mkdirSync(target, { recursive: true });
  fs.chmodSync(shut, 0o750);
  assert.equal(firstUntraversable(target), shut);
  assert.equal(firstUntraversable(path.join(shut, "inner", ".", "ws")), shut);
  fs.chmodSync(shut, 0o711);
  const ancestorsOpen = firstUntraversable(top) === undefined;
  // the scratch folder's own ancestors (/tmp, /) are world-traversable on any sane machine
  assert.ok(ancestorsOpen, `an ancestor of ${top} is closed`);
  assert.equal(firstUntraversable(target), undefined);
});

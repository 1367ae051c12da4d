// A uid keeps what it owns after its hub stops (hub/tenants/uid-claims.ts). Before the claims, a hub
// on another workspace whose tenant met a stopped hub's tenant's uid (the same explicit uid, or two
// derived ones) gave its agent the first tenant's files: `cat <other workspace>/secret.txt` from its
// terminal printed them. Now such a hub is refused while that folder is the uid's, and a person
// signing in steps past the uid; once the folder is gone, what the earlier tenant left elsewhere (its
// home, its files in /tmp) is closed to the uid's next tenant.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import type { HubConfig } from "../../../hub/config/config.js";
import type { Logger } from "../../../servers/lib/log.js";
import { systemClock } from "../../../hub/protocol/clock.js";
import { People, personTenantName } from "../../../hub/tenants/people.js";
import { derivedUid, type Tenant } from "../../../hub/tenants/tenants.js";
import { UidClaims, UidOwned } from "../../../hub/tenants/uid-claims.js";
import { UidLocks } from "../../../hub/tenants/uid-locks.js";
import { call, refusalOf, startHub, tempDir, textOf } from "../../helpers/hub.js";

const scratch = tempDir("agentbox-uid-claims-");
after(() => fs.rmSync(scratch, { recursive: true, force: true }));
let made = 0;
/** A lock folder and a claim folder of their own: each test's machine. */
const machine = () => {
  const dir = path.join(scratch, `machine-${++made}`);
  return { lockDir: path.join(dir, "locks"), claimDir: path.join(dir, "claims") };
};
const me = process.getuid?.() ?? 0;

/** Another workspace's tenant given `uid`, whose folder is `folder`, as that hub's claim left it. */
function claimedElsewhere(claimDir: string, uid: number, folder: string, tenant = "bob"): void {
  fs.mkdirSync(claimDir, { recursive: true });
  const claim = { uid, tenant, workspace: "/srv/other", folder, since: "2026-11-28T10:00:00.000Z" };
  fs.writeFileSync(UidClaims.fileFor(claimDir, uid), JSON.stringify(claim));
}

const claimOf = (claimDir: string, uid: number) => JSON.parse(fs.readFileSync(UidClaims.fileFor(claimDir, uid), "utf8"));

describe("uid claims", () => {
  test("a uid that still owns another workspace's tenant's folder is refused, naming the folder and what to do; once the folder is gone it is taken", () => {
    const { lockDir, claimDir } = machine();
    // a folder this process makes is its uid's: the stopped hub's tenant's folder, for a tenant given this uid
    const folder = fs.mkdtempSync(path.join(scratch, "bob-"));
    claimedElsewhere(claimDir, me, folder);
    const locks = new UidLocks(lockDir, "/srv/mine", claimDir);
    assert.throws(
      () => locks.take(me, { name: "alice", folder: "/srv/mine/alice" }, { explicit: true, setting: '"uid" in its config entry' }),
      (err: unknown) =>
        err instanceof UidOwned &&
        err.claim.folder === folder &&
        err.message.includes(`Tenant 'alice' would run as uid ${me}, which owns the folder ${folder} of tenant 'bob' (workspace /srv/other`) &&
        err.message.includes("its processes could read and change those files") &&
        err.message.includes(
          `Give 'alice' another uid ("uid" in its config entry), or remove the folder or give it to root (chown root: ${folder}) if that tenant is gone for good.`,
        ),
    );
    assert.equal(fs.existsSync(UidLocks.fileFor(lockDir, me)), false, "a refused uid is not left locked");
    assert.throws(() => locks.take(me, { name: "alice", folder: "/srv/mine/alice" }), /The uid is derived from this workspace and the name 'alice'/);

    fs.rmSync(folder, { recursive: true });
    locks.take(me, { name: "alice", folder: "/srv/mine/alice" });
    assert.deepEqual(
      [claimOf(claimDir, me).tenant, claimOf(claimDir, me).workspace, claimOf(claimDir, me).folder],
      ["alice", "/srv/mine", "/srv/mine/alice"],
      "the stale claim is alice's now",
    );
    locks.releaseAll();
  });

  test("the same tenant of the same workspace takes its uid again; another tenant of it is refused; a folder that changed hands, or a garbage claim, is no claim", () => {
    const { lockDir, claimDir } = machine();
    const folder = fs.mkdtempSync(path.join(scratch, "alice-"));
    const first = new UidLocks(lockDir, "/srv/mine", claimDir);
    first.take(me, { name: "alice", folder });
    first.releaseAll();
    // the hub started again: alice's own files are hers
    const again = new UidLocks(lockDir, "/srv/mine", claimDir);
    again.take(me, { name: "alice", folder });
    again.releaseAll();
    assert.throws(() => again.take(me, { name: "renamed", folder: "/srv/mine/renamed" }), UidOwned);

    // a claim naming a uid its folder does not belong to: the folder changed hands (this process's uid is not 41010)
    claimedElsewhere(claimDir, 41_010, folder);
    again.take(41_010, { name: "carol", folder: "/srv/mine/carol" });
    assert.equal(claimOf(claimDir, 41_010).tenant, "carol");
    fs.writeFileSync(UidClaims.fileFor(claimDir, 41_011), "{not json");
    again.take(41_011, { name: "dave", folder: "/srv/mine/dave" });
    assert.equal(claimOf(claimDir, 41_011).tenant, "dave");
    // a symbolic link where the folder was is not the folder
    const link = path.join(scratch, `link-${made}`);
    fs.symlinkSync(folder, link);
    claimedElsewhere(claimDir, me, link);
    again.take(me, { name: "erin", folder: "/srv/mine/erin" });
    again.releaseAll();
  });
});

describe("a person signing in", { skip: me === 0 ? false : "needs root: a folder owned by another uid" }, () => {
  test("steps past a uid that still owns another workspace's tenant's folder", async () => {
    const { lockDir, claimDir } = machine();
    const workspace = path.join(scratch, "people-ws");
    const config = {
      workspace,
      stateDir: path.join(scratch, "people-state"),
      limits: {},
      tenants: [],
      oauth: { issuer: "https://id.example.com", tenantClaim: "sub", scopes: true, maxTenants: 2, idleMs: 60_000 },
    } as unknown as HubConfig & { oauth: NonNullable<HubConfig["oauth"]> };
    const name = personTenantName(config.oauth.issuer, "zoe");
    const derived = derivedUid(name, workspace);
    const folder = fs.mkdtempSync(path.join(scratch, "other-"));
    fs.chownSync(folder, derived, derived);
    claimedElsewhere(claimDir, derived, folder);
    const served: Tenant[] = [];
    const people = new People(
      config,
      { mode: "uid", summary: "test", canDropBoundingSet: false },
      { network: "shared", networkSummary: "test", tenants: new Map() },
      () => served,
      { serve: async (tenant) => (served.push(tenant), tenant), busy: () => false, drop: async () => undefined },
      systemClock,
      new UidLocks(lockDir, workspace, claimDir),
    );
    const zoe = await people.tenantFor("zoe");
    assert.notEqual(zoe.identity?.uid, derived, "zoe is not given the uid that owns bob's folder");
    assert.equal(zoe.identity?.uid, derivedUid(`${name}#1`, workspace));
    assert.equal(claimOf(claimDir, zoe.identity!.uid).folder, path.join(workspace, name));
    assert.equal(claimOf(claimDir, derived).tenant, "bob", "bob's claim stands");
  });
});

describe("a stale claim taken over", { skip: me === 0 ? false : "needs root: folders owned by other uids" }, () => {
  test("the gone tenant's state folder, unless it is the new tenant's own, and what its uid left in /tmp are given to root", () => {
    const { lockDir, claimDir } = machine();
    const uid = 41_020;
    // as the hub makes it: root's and traversable, the home in it the uid's
    const goneState = fs.mkdtempSync(path.join(scratch, "bob-state-"));
    fs.chmodSync(goneState, 0o711);
    fs.mkdirSync(path.join(goneState, "home"), { mode: 0o700 });
    fs.chownSync(path.join(goneState, "home"), uid, uid);
    // bob's workspace folder is gone; his state folder is still the uid's
    fs.writeFileSync(
      UidClaims.fileFor((fs.mkdirSync(claimDir, { recursive: true }), claimDir), uid),
      JSON.stringify({ uid, tenant: "bob", workspace: "/srv/other", folder: "/srv/other/bob", state: goneState, since: "2026-11-28T10:00:00.000Z" }),
    );
    // and what the uid left in the shared /tmp: a file and a folder, private to the uid as its umask (077) makes them
    const leftFile = path.join("/tmp", `agentbox-left-${process.pid}.txt`);
    const leftDir = path.join("/tmp", `agentbox-left-${process.pid}`);
    fs.writeFileSync(leftFile, "bob's", { mode: 0o600 });
    fs.mkdirSync(leftDir, { mode: 0o755 });
    for (const left of [leftFile, leftDir]) fs.chownSync(left, uid, uid);
    after(() => [leftFile, leftDir].forEach((left) => fs.rmSync(left, { recursive: true, force: true })));
    const logged: unknown[] = [];
    const log = { warn: (msg: string, fields: unknown) => logged.push([msg, fields]) } as unknown as Logger;
    const locks = new UidLocks(lockDir, "/srv/mine", claimDir, log);
    locks.take(uid, { name: "alice", folder: "/srv/mine/alice", state: "/srv/state/alice" });
    const st = fs.statSync(goneState);
    assert.deepEqual([st.uid, st.mode & 0o777], [0, 0o700], "closed to the uid's next tenant, kept for the operator");
    assert.ok(fs.existsSync(path.join(goneState, "home")));
    assert.deepEqual(
      [leftFile, leftDir].map((left) => [fs.statSync(left).uid, fs.statSync(left).mode & 0o777]),
      [
        [0, 0o600],
        [0, 0o700],
      ],
    );
    assert.deepEqual(logged, [
      [
        "closed what a gone tenant of this uid left to the uid's next tenant (given to root)",
        { uid, tenant: "alice", closed: 3, first: [goneState, ...[leftFile, leftDir].sort()] },
      ],
    ]);
    assert.equal(claimOf(claimDir, uid).state, "/srv/state/alice");
    locks.releaseAll();

    // the same state folder for both (the same name and uid, one state folder): it is the new tenant's own
    const shared = fs.mkdtempSync(path.join(scratch, "shared-state-"));
    fs.chmodSync(shared, 0o711);
    fs.writeFileSync(
      UidClaims.fileFor(claimDir, uid),
      JSON.stringify({ uid, tenant: "default", workspace: "/srv/other", folder: "/srv/other", state: shared, since: "2026-11-28T10:00:00.000Z" }),
    );
    new UidLocks(lockDir, "/srv/mine", claimDir).take(uid, { name: "default", folder: "/srv/mine", state: shared });
    assert.equal(fs.statSync(shared).mode & 0o777, 0o711, "left open: the new tenant's home is in it");
  });
});

describe("two hubs as root, one after the other, whose tenants share a uid", { skip: me === 0 ? false : "needs root: per-tenant uids" }, () => {
  test("the second is refused while the first one's tenant's folder is the uid's; once it is gone it starts, and its agent can neither enter the first tenant's home nor read what it left in /tmp", async () => {
    // a uid apart from the other root tests' (uid-locks.test.ts takes 47000-47999)
    const uid = 48_000 + (process.pid % 1000);
    const key = (name: string) => `${name}-key-${"0123456789abcdef".repeat(2)}`;
    const optionsOf = (tenant: string) => ({ servers: ["file", "terminal"], config: { tenants: { [tenant]: { apiKey: key(tenant), uid } } } });
    const keep = tempDir("agentbox-ws-");
    fs.chmodSync(keep, 0o755);
    const leftover = `/tmp/agentbox-alice-left-${process.pid}.txt`;
    after(() => fs.rmSync(leftover, { force: true }));
    const first = await startHub({ ...optionsOf("alice"), workspace: keep });
    let aliceHome: string;
    try {
      const client = await first.connect({ headers: { Authorization: `Bearer ${key("alice")}` } });
      assert.match(textOf(await call(client, "file_write", { path: "secret.txt", content: "alice's secret" })), /Created secret\.txt/);
      const out = textOf(
        await call(client, "terminal_exec", {
          command: `echo "alice's home secret" > ~/home-secret.txt; echo "alice's tmp secret" > ${leftover}; echo "HOME=$HOME"`,
        }),
      );
      aliceHome = /HOME=(\S+)/.exec(out)![1];
      await client.close();
    } finally {
      await first.stop();
    }
    assert.equal(fs.statSync(keep).uid, uid);

    const refused = await refusalOf(optionsOf("bob"));
    assert.match(refused, /hub exited with 1/);
    assert.ok(refused.includes("refusing to start: a tenant's uid owns another tenant's files"), refused);
    assert.ok(refused.includes(`Tenant 'bob' would run as uid ${uid}, which owns the folder ${keep} of tenant 'alice' (workspace ${keep}`), refused);
    assert.ok(
      refused.includes(
        // the log line is JSON: the setting's quotes are escaped
        `Give 'bob' another uid (\\"uid\\" in its config entry), or remove the folder or give it to root (chown root: ${keep}) if that tenant is gone for good.`,
      ),
      refused,
    );
    assert.doesNotMatch(refused, /"msg":"listening"/, "the refused hub never served an agent");

    fs.rmSync(keep, { recursive: true });
    const second = await startHub(optionsOf("bob"));
    try {
      assert.ok(
        second.logs.some((line) => line.includes("closed what a gone tenant of this uid left") && line.includes(path.dirname(aliceHome))),
        second.logs.join("\n"),
      );
      const client = await second.connect({ headers: { Authorization: `Bearer ${key("bob")}` } });
      const out = textOf(await call(client, "terminal_exec", { command: `id -u; cat ${aliceHome}/home-secret.txt; cat ${leftover}` }));
      assert.match(out, new RegExp(`--- stdout ---\\n${uid}\\n`));
      assert.match(out, /Permission denied/);
      assert.doesNotMatch(out, /alice's (home|tmp) secret/);
      assert.equal((out.match(/Permission denied/g) ?? []).length, 2, out);
      await client.close();
    } finally {
      await second.stop();
    }
  });
});

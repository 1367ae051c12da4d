// People's tenants over time (hub/tenants/people.ts), on the hub's clock driven by mock.timers: a
// person away for the idle period with nothing going on has their tenant dropped and their place
// freed, never sooner and never while busy; they come back to the same uid; a flood of new subjects
// still meets maxTenants while the places are held. The hub's side (servers stopped, processes
// ended) is test/hub/http/oauth-idle.test.ts.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, mock, test } from "node:test";
import type { HubConfig } from "../../../hub/config/config.js";
import type { Isolation } from "../../../hub/tenants/isolation.js";
import { People, PersonRefused } from "../../../hub/tenants/people.js";
import type { Tenant } from "../../../hub/tenants/tenants.js";
import { systemClock } from "../../../hub/protocol/clock.js";

const START = Date.parse("2026-11-27T12:00:00Z");
const IDLE_MS = 30 * 60_000;
const MINUTE = 60_000;
const isolation: Isolation = { mode: "uid", summary: "test", canDropBoundingSet: false };
/** Lets the drops the timer started settle (setImmediate is not mocked). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("people's tenants idle away", () => {
  let scratch: string;
  let served: Tenant[];
  let dropped: Tenant[];
  const busy = new Set<string>();
  let people: People<Tenant>;
  const dropNow = async (tenant: Tenant) => {
    served.splice(served.indexOf(tenant), 1);
    dropped.push(tenant);
  };
  /** What dropping a tenant does: at once, unless a test holds it. */
  let drop = dropNow;

  beforeEach(() => {
    mock.timers.enable({ apis: ["Date", "setInterval", "setTimeout"], now: START });
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), "people-unit-"));
    served = [];
    dropped = [];
    drop = dropNow;
    busy.clear();
    const config = {
      workspace: path.join(scratch, "ws"),
      stateDir: path.join(scratch, "state"),
      limits: {},
      tenants: [],
      oauth: { issuer: "https://id.example.com", tenantClaim: "sub", scopes: true, maxTenants: 2, idleMs: IDLE_MS },
    } as unknown as HubConfig & { oauth: NonNullable<HubConfig["oauth"]> };
    people = new People(
      config,
      isolation,
      { network: "shared", networkSummary: "test", tenants: new Map() },
      () => served,
      {
        serve: async (tenant) => (served.push(tenant), tenant),
        busy: (tenant) => busy.has(tenant.person!),
        drop: (tenant) => drop(tenant),
      },
      systemClock,
    );
    people.start();
  });
  afterEach(async () => {
    await people.stop();
    mock.timers.reset();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  test("a person away for the idle period is dropped, not sooner, and comes back to the same uid", async () => {
    const first = await people.tenantFor("ada");
    mock.timers.tick(IDLE_MS - MINUTE);
    await settle();
    assert.equal(dropped.length, 0, "not before the idle period");
    await people.tenantFor("ada");
    mock.timers.tick(IDLE_MS - MINUTE);
    await settle();
    assert.equal(dropped.length, 0, "a request starts the period again");
    mock.timers.tick(2 * MINUTE);
    await settle();
    assert.deepEqual(dropped, [first]);
    assert.equal(people.count, 0, "the place is free");
    const again = await people.tenantFor("ada");
    assert.notEqual(again, first, "a new tenant");
    assert.equal(again.name, first.name);
    assert.equal(again.identity?.uid, first.identity?.uid, "with the same uid, which owns their files");
  });

  test("a busy person is never dropped, and new subjects beyond maxTenants are refused while places are held", async () => {
    await people.tenantFor("ada");
    const grace = await people.tenantFor("grace");
    busy.add("ada");
    busy.add("grace");
    for (let i = 0; i < 3; i++) {
      mock.timers.tick(IDLE_MS);
      await settle();
    }
    assert.equal(dropped.length, 0);
    for (const subject of ["mallory-1", "mallory-2", "mallory-3"]) await assert.rejects(people.tenantFor(subject), PersonRefused);
    busy.delete("grace");
    mock.timers.tick(MINUTE);
    await settle();
    assert.deepEqual(dropped, [grace], "only the one with nothing going on");
    await people.tenantFor("mallory-1");
    await assert.rejects(people.tenantFor("mallory-2"), PersonRefused, "the freed place is taken");
  });

  test("a request while the tenant is being dropped waits, then gets a new tenant with the same uid", async () => {
    const first = await people.tenantFor("ada");
    let finish = () => {};
    const slowDrop = new Promise<void>((resolve) => (finish = resolve));
    drop = async (tenant) => {
      await slowDrop;
      await dropNow(tenant);
    };
    mock.timers.tick(IDLE_MS + MINUTE);
    await settle();
    let back: Tenant | undefined;
    const coming = people.tenantFor("ada").then((t) => (back = t));
    await settle();
    assert.equal(back, undefined, "not the tenant being dropped");
    assert.equal(people.count, 1, "the dropped tenant holds its place until gone");
    finish();
    await coming;
    assert.deepEqual(dropped, [first]);
    assert.notEqual(back, first);
    assert.equal(back!.identity?.uid, first.identity?.uid);
  });
});

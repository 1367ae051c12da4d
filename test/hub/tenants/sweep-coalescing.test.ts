// When the sweeper runs, on the hub's clock (mock.timers drives it): every AGENTBOX_SWEEP_MS, and
// after sessions end. Sessions ending in bulk (a client churning through them, or a shutdown) cost
// the hub one pair of process-table sweeps per tenant, not a pair per session: 1,200 closures were
// 2,400 sweeps of /proc, and 10,000 queued ahead of the forced-exit timer kept a stopping hub alive
// for minutes.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, mock, test } from "node:test";
import { systemClock } from "../../../hub/protocol/clock.js";
import type { ServedTenant } from "../../../hub/tenants/served-tenant.js";
import { ProcessSweeper } from "../../../hub/tenants/sweeper.js";

const tenant = { name: "t", identity: { uid: 12345 }, children: [] } as unknown as ServedTenant;
const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

/** A sweeper whose sweeps are only counted: what a sweep does is the other sweeper tests'. */
function countingSweeper(everyMs?: number): { sweeper: ProcessSweeper; swept: ServedTenant[][] } {
  const sweeper = new ProcessSweeper([tenant], { all: () => [] }, silent, () => (command, args) => ({ command, args }), systemClock, { everyMs });
  const swept: ServedTenant[][] = [];
  (sweeper as unknown as { sweep: (tenants: ServedTenant[]) => Promise<void> }).sweep = async (tenants) => void swept.push(tenants);
  return { sweeper, swept };
}

afterEach(() => mock.timers.reset());

test("a thousand sessions of a tenant ending at once schedule at most two sweeps of its processes", () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  const { sweeper, swept } = countingSweeper();
  for (let i = 0; i < 1000; i++) sweeper.sessionEnded({ token: `s${i}`, tenant });
  mock.timers.tick(10_000);
  assert.ok(swept.length >= 1 && swept.length <= 2, `${swept.length} sweeps for 1000 ended sessions`);
  assert.deepEqual(swept[0], [tenant]);
  // a session ending after those sweeps gets its own
  const before = swept.length;
  sweeper.sessionEnded({ token: "late", tenant });
  mock.timers.tick(10_000);
  assert.ok(swept.length > before, "a later session end is swept too");
});

test("a session's end is swept after one second and again after three, so what its servers missed is taken", () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  const { sweeper, swept } = countingSweeper();
  sweeper.sessionEnded({ token: "s", tenant });
  mock.timers.tick(999);
  assert.equal(swept.length, 0, "its servers get a second to end what they know of");
  mock.timers.tick(1);
  assert.equal(swept.length, 1);
  mock.timers.tick(2_000);
  assert.equal(swept.length, 2);
  mock.timers.tick(60_000);
  assert.equal(swept.length, 2, "and no more");
});

test("the periodic sweep runs every AGENTBOX_SWEEP_MS once started, and not after stop", async () => {
  mock.timers.enable({ apis: ["setInterval"] });
  const { sweeper, swept } = countingSweeper(5_000);
  sweeper.start();
  mock.timers.tick(4_999);
  assert.equal(swept.length, 0);
  mock.timers.tick(1);
  assert.deepEqual(swept, [[tenant]]);
  mock.timers.tick(15_000);
  assert.equal(swept.length, 4);
  await sweeper.stop();
  mock.timers.tick(60_000);
  assert.equal(swept.length, 4, "a stopped sweeper sweeps no more");
});

test("a hub without tenant uids never sweeps", () => {
  mock.timers.enable({ apis: ["setInterval", "setTimeout"] });
  const shared = { name: "shared", children: [] } as unknown as ServedTenant;
  const sweeper = new ProcessSweeper([shared], { all: () => [] }, silent, () => (command, args) => ({ command, args }), systemClock, { everyMs: 5_000 });
  const swept: ServedTenant[][] = [];
  (sweeper as unknown as { sweep: (tenants: ServedTenant[]) => Promise<void> }).sweep = async (tenants) => void swept.push(tenants);
  sweeper.start();
  sweeper.sessionEnded({ token: "s", tenant: shared });
  mock.timers.tick(60_000);
  assert.equal(swept.length, 0);
});

test("a sweeper that cannot list POSIX message queues says so when it starts, with how to mount them", (t) => {
  const warned: string[] = [];
  const log = { ...silent, warn: (line: string) => void warned.push(line) };
  const notMounted = fs.mkdtempSync(path.join(os.tmpdir(), "agentbox-no-mqueue-"));
  t.after(() => fs.rmSync(notMounted, { recursive: true }));
  const sweeper = new ProcessSweeper([tenant], { all: () => [] }, log, () => (command, args) => ({ command, args }), systemClock, {
    everyMs: 60_000,
    queueDir: notMounted,
  });
  sweeper.start();
  void sweeper.stop();
  assert.equal(warned.length, 1);
  assert.match(warned[0], new RegExp(`POSIX message queues cannot be listed.*${notMounted} is not mounted.*mount -t mqueue none ${notMounted}`));
});

// Sessions ending in bulk (a client churning through them, or a shutdown) cost the hub one pair of
// process-table sweeps per tenant, not a pair per session: 1,200 closures were 2,400 sweeps of
// /proc, and 10,000 queued ahead of the forced-exit timer kept a stopping hub alive for minutes.
import assert from "node:assert/strict";
import { mock, test } from "node:test";
import type { ServedTenant } from "../../../hub/tenants/served-tenant.js";
import { ProcessSweeper } from "../../../hub/tenants/sweeper.js";

test("a thousand sessions of a tenant ending at once schedule at most two sweeps of its processes", () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  try {
    const tenant = { name: "t", identity: { uid: 12345 }, children: [] } as unknown as ServedTenant;
    const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
    const sweeper = new ProcessSweeper([tenant], { all: () => [] }, silent, () => (command, args) => ({ command, args }));
    const swept: ServedTenant[][] = [];
    // what a sweep does is another test's; here only how often one runs
    (sweeper as unknown as { sweep: (tenants: ServedTenant[]) => void }).sweep = (tenants) => void swept.push(tenants);
    for (let i = 0; i < 1000; i++) sweeper.sessionEnded({ token: `s${i}`, tenant });
    mock.timers.tick(10_000);
    assert.ok(swept.length >= 1 && swept.length <= 2, `${swept.length} sweeps for 1000 ended sessions`);
    assert.deepEqual(swept[0], [tenant]);
    // a session ending after those sweeps gets its own
    const before = swept.length;
    sweeper.sessionEnded({ token: "late", tenant });
    mock.timers.tick(10_000);
    assert.ok(swept.length > before, "a later session end is swept too");
  } finally {
    mock.timers.reset();
  }
});

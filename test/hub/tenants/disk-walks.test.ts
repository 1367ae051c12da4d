// When the hub walks the disk to measure its tenants (hub/tenants/disk-budget.ts): not every 2 s
// while nothing on the tenants' filesystems changes (an idle hub spent most of its CPU on walks),
// but at once when bytes or files are taken, at least every 30 s (one tenant can write what another
// deletes), every 2 s while a tenant is frozen (its deletions must let it write again soon), and
// after a long walk, not ten walks later while the disk fills past the least room a tenant has.
// Time is node:test's mock clock; the walk and the free space are stand-ins the test moves.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, mock, test } from "node:test";
import { createLogger } from "../../../servers/lib/log.js";
import { DiskBudgets, type BudgetedTenant } from "../../../hub/tenants/disk-budget.js";
import type { Free } from "../../../hub/tenants/disk-usage.js";

const MIB = 1024 * 1024;
const BUDGET = 64 * MIB;

function budgetsUnderTest() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "disk-walks-"));
  const tenant: BudgetedTenant = {
    name: "alice",
    identity: {
      uid: 54_321,
      gid: 54_321,
      processes: 64,
      memoryBytes: 64 * MIB,
      disk: { budgetBytes: BUDGET, frozen: false, locked: false },
      sharedMemoryBytes: MIB,
    },
    workspace: root,
    home: root,
    tmp: root,
    diskStatus: path.join(root, "disk.json"),
    children: [],
  };
  const free: Free = { bytes: 10_000 * MIB, inodes: 1_000_000 };
  let used = 0;
  let walks = 0;
  let walkMs = 0;
  let partial = false;
  const budgets = new DiskBudgets(
    [tenant],
    createLogger({}, { write: () => undefined }),
    // a frozen tenant's processes are lowered through this: there are none under its uid
    () => ({ command: "true", args: [] }),
    {
      walk: async (_roots, uids) => {
        walks++;
        if (walkMs) await new Promise((resolve) => setTimeout(resolve, walkMs));
        return { bytes: new Map(uids.map((uid) => [uid, used])), preallocated: new Map(), ...(partial ? { partial } : {}) };
      },
      freeOn: async () => ({ ...free }),
    },
  );
  return {
    budgets,
    tenant,
    free,
    setUsed: (bytes: number) => (used = bytes),
    /** How long each walk takes on the mock clock (a tenant holding many files makes walks long). */
    setWalkMs: (ms: number) => (walkMs = ms),
    /** Walks come back cut short (over their time): each figure is at least what is used. */
    setPartial: (cut: boolean) => (partial = cut),
    walks: () => walks,
    cleanup: () => {
      budgets.stop();
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Let the hub's promises (and any real I/O they wait on) settle after the clock moved. */
async function settle(turns = 50): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Move the clock in steps of the 250 ms watch, as real time would. */
async function advance(ms: number): Promise<void> {
  for (let done = 0; done < ms; done += 250) {
    mock.timers.tick(250);
    await settle();
  }
}

/**
 * Wait for the hub to have walked `count` times (a pass reads the filesystems for real first, so
 * a walk due at a tick may land some turns later), then check it has walked exactly that often.
 */
async function walked(count: number, why: string): Promise<void> {
  for (let i = 0; i < 10_000 && hub.walks() < count; i++) await settle(1);
  await hub.budgets.settled();
  await settle();
  assert.equal(hub.walks(), count, why);
}

/** Wait for walk number `count` to have begun (a pass reads the filesystems for real before it walks). */
async function begun(count: number, why: string): Promise<void> {
  for (let i = 0; i < 10_000 && hub.walks() < count; i++) await settle(1);
  assert.equal(hub.walks(), count, why);
}

let hub: ReturnType<typeof budgetsUnderTest>;
beforeEach(() => {
  mock.timers.enable({ apis: ["setTimeout", "setInterval", "Date"] });
  hub = budgetsUnderTest();
});
afterEach(() => {
  hub.cleanup();
  mock.timers.reset();
});

test("nothing changes: one walk at start, then one every 30 s, not every 2 s", async () => {
  hub.budgets.start();
  await walked(1, "the first walk, at start");
  await advance(28_000);
  await walked(1, "no walk while every filesystem keeps what it had free");
  await advance(4_000);
  await walked(2, "a walk by 30 s anyway: one tenant may write what another deletes");
});

test("a MiB written, or 64 files made, is walked within the 2 s interval", async () => {
  hub.budgets.start();
  await walked(1, "the first walk, at start");
  await advance(4_000);
  await walked(1, "nothing changed yet");
  hub.free.bytes -= MIB;
  await advance(2_000);
  await walked(2, "bytes taken");
  await advance(4_000);
  await walked(2, "nothing changed since");
  hub.free.inodes -= 64;
  await advance(2_000);
  await walked(3, "files made, however small");
  // deletions count as a change too: the numbers shown to tenants go down again
  hub.free.bytes += 5 * MIB;
  await advance(2_000);
  await walked(4, "bytes freed");
});

test("a frozen tenant is walked every 2 s, so deleting files lets it write again soon", async () => {
  hub.setUsed(BUDGET);
  hub.budgets.start();
  await walked(1, "the first walk, at start");
  assert.equal(hub.tenant.identity!.disk.frozen, true);
  const frozenAt = hub.walks();
  // its processes are listed and lowered for real (none): wait for each walk rather than a time
  for (let step = 1; step <= 3; step++) {
    mock.timers.tick(2_000);
    await walked(frozenAt + step, `walk ${step} since the freeze, with no change in free space`);
  }
  hub.setUsed(BUDGET / 2);
  mock.timers.tick(2_000);
  await walked(frozenAt + 4, "the walk that finds it under budget");
  assert.equal(hub.tenant.identity!.disk.frozen, false, "thawed at the next walk, with no change in free space");
});

test("after a long walk, a disk filling past a tenant's room is walked again within the walk's length, not ten times it", async () => {
  const ROOM = 8 * MIB;
  hub.setUsed(BUDGET - ROOM);
  hub.setWalkMs(10_000);
  hub.budgets.start();
  await begun(1, "the first walk");
  for (const next of [2, 3]) {
    await advance(10_000);
    await hub.budgets.settled();
    // the periodic walk is now 100 s away (ten times the walk); the disk fills by more than alice has room for
    hub.free.bytes -= 2 * ROOM;
    await advance(9_000);
    assert.equal(hub.walks(), next - 1, "a pause as long as the walk first: measuring takes at most half a core");
    await advance(1_500);
    await begun(next, `then walk ${next} at once, not 100 s after the last`);
  }
});

test("a walk cut short freezes a tenant it finds over budget, and neither thaws one nor replaces the last numbers", async () => {
  hub.setUsed(BUDGET / 4);
  hub.budgets.start();
  await walked(1, "a whole walk at start");
  hub.setPartial(true);
  hub.setUsed(BUDGET / 8);
  hub.free.bytes -= MIB;
  await advance(2_000);
  await walked(2, "a walk cut short");
  assert.equal(hub.budgets.usage(hub.tenant)?.usedBytes, BUDGET / 4, "what a walk cut short counted under budget proves nothing: the last numbers stay");
  hub.setUsed(BUDGET + MIB);
  hub.free.bytes -= MIB;
  await advance(2_000);
  await walked(3, "another walk cut short");
  assert.equal(hub.tenant.identity!.disk.frozen, true, "counted over budget before the cut: frozen");
  hub.setUsed(BUDGET / 2);
  mock.timers.tick(2_000);
  await walked(4, "a frozen tenant's next walk, cut short again");
  assert.equal(hub.tenant.identity!.disk.frozen, true, "not thawed by a walk that counted less than everything");
  hub.setPartial(false);
  mock.timers.tick(2_000);
  await walked(5, "a whole walk");
  assert.equal(hub.tenant.identity!.disk.frozen, false, "thawed by a whole walk under budget");
});

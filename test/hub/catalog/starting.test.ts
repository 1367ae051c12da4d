// A list in the hub's first seconds waits for the servers it would show that are still starting
// (hub/catalog/starting.ts), and for no longer than its bound: driven by node:test's mock.timers.
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, mock, test } from "node:test";
import { STARTING_WAIT_MS, untilStarted, type StartingServer } from "../../../hub/catalog/starting.js";
import { systemClock } from "../../../hub/protocol/clock.js";
import type { ChildState } from "../../../hub/children/child.js";

/** A server in `state` whose start settles when the test says so. */
function server(name: string, state: ChildState): StartingServer & { up(): void } {
  let up!: () => void;
  const started = new Promise<void>((resolve) => (up = resolve));
  return { name, state, started, up };
}

/** Whether `promise` has settled, after letting every queued reaction run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  for (let i = 0; i < 10; i++) await Promise.resolve();
  return done;
}

describe("a list waits for servers still starting", () => {
  beforeEach(() => mock.timers.enable({ apis: ["setTimeout", "Date"] }));
  afterEach(() => mock.timers.reset());

  test("it settles once every starting server it shows is up, not before", async () => {
    const [a, b] = [server("a", "starting"), server("b", "starting")];
    const wait = untilStarted([a, b], () => true, systemClock);
    a.up();
    assert.equal(await settled(wait), false, "b is still starting");
    b.up();
    assert.equal(await settled(wait), true);
  });

  test("it waits no longer than its bound for a server that takes longer", async () => {
    const slow = server("slow", "starting");
    const wait = untilStarted([slow], () => true, systemClock);
    mock.timers.tick(STARTING_WAIT_MS - 1);
    assert.equal(await settled(wait), false);
    mock.timers.tick(1);
    assert.equal(await settled(wait), true, "the list is answered with what is up");
  });

  test("servers outside the selection, ready, restarting (still listed) or idle are not waited for", async () => {
    const others = [server("hidden", "starting"), server("r", "ready"), server("again", "restarting"), server("i", "idle"), server("f", "failed")];
    assert.equal(await settled(untilStarted(others, (name) => name !== "hidden", systemClock)), true);
  });
});

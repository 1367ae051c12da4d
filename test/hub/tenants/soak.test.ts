// The soak of bench/soak.ts, small: one round of honest sessions (files, a command, code, a page in
// the browser) while the other tenant runs every attack at once. It runs here so that a change
// that breaks it (a page the honest tenant may no longer reach, a sweep attack whose daemons no
// longer outlive their command) fails the suite instead of waiting for the next recording.
import assert from "node:assert/strict";
import { test } from "node:test";
import { soak } from "../../../bench/soak.js";

const skip = process.getuid?.() === 0 ? false : "needs root: the soak's tenants have uids of their own";

test("an honest tenant's calls all succeed while the other tenant runs every attack at once", { skip }, async () => {
  const result = await soak(() => undefined, 1, 4);
  assert.deepEqual(result.errors, []);
  assert.equal(result.honestCalls, 4 * 7);
  assert.ok(result.hubPeakRssMiB <= result.budgetMiB, `hub peak RSS ${result.hubPeakRssMiB} MiB`);
  // each attack ran to its end; the sweep attack's command started its 200 daemons and killed its
  // reaper, so that they outlive it and the sweeper has to read their 1 MB environments
  assert.deepEqual(Object.keys(result.attacks).sort(), ["disk", "memory", "output", "port", "sessions", "sweep"]);
  assert.match(result.attacks.sweep, /^Killed by SIGKILL\.[\s\S]*\b200 daemons\b/);
});

// Rate-rule choice and counting in hub/sessions/rate-limits.ts on its own: which pattern governs a tool,
// which calls share a budget, and when a window's budget comes back. Limits of 1-3 per minute, so
// only the last, which drives the clock with mock.timers, depends on it.
import assert from "node:assert/strict";
import { describe, mock, test } from "node:test";
import { RateLimits } from "../../../hub/sessions/rate-limits.js";

/** How many calls in a row the limiter allows before refusing, and the rule it names then. */
async function budget(limits: RateLimits, tool: string, client = "c"): Promise<{ allowed: number; rule?: string }> {
  for (let allowed = 0; allowed < 20; allowed++) {
    const verdict = await limits.checkTool(client, tool);
    if (!verdict.allowed) {
      assert.ok(verdict.retryAfterMs > 0, "a refusal says how long to wait");
      return { allowed, rule: verdict.rule };
    }
  }
  return { allowed: Infinity };
}

describe("which rule governs a tool", () => {
  test("an exact name beats any glob, a longer glob beats a shorter one, whatever the config order", async () => {
    const rules = { "*": "1/min", "file_*": "2/min", file_read: "3/min", "file_wr*": "4/min" };
    for (const tools of [rules, Object.fromEntries(Object.entries(rules).reverse())]) {
      const limits = new RateLimits({ tools });
      assert.deepEqual(await budget(limits, "file_read"), { allowed: 3, rule: "file_read 3/min" });
      assert.deepEqual(await budget(limits, "file_write"), { allowed: 4, rule: "file_wr* 4/min" });
      assert.deepEqual(await budget(limits, "file_list"), { allowed: 2, rule: "file_* 2/min" });
      assert.deepEqual(await budget(limits, "browser_open"), { allowed: 1, rule: "* 1/min" });
    }
  });

  test("between globs of one length, the one with fewer wildcards wins", async () => {
    const rules = { "file_r??d": "1/min", "file_rea?": "2/min" };
    for (const tools of [rules, Object.fromEntries(Object.entries(rules).reverse())]) {
      assert.deepEqual(await budget(new RateLimits({ tools }), "file_read"), { allowed: 2, rule: "file_rea? 2/min" });
    }
  });

  test("a tool no rule matches is not limited; false turns every limit off", async () => {
    assert.equal((await budget(new RateLimits({ tools: { "file_*": "1/min" } }), "browser_open")).allowed, Infinity);
    const off = new RateLimits(false);
    assert.equal((await budget(off, "file_read")).allowed, Infinity);
    for (let i = 0; i < 20; i++) assert.ok((await off.checkMethod("c", "tools/list")).allowed);
  });
});

describe("who shares a budget", () => {
  test("every tool under one glob has its own counter, so a busy tool does not starve its siblings", async () => {
    const limits = new RateLimits({ tools: { "file_*": "1/min" } });
    assert.equal((await budget(limits, "file_read")).allowed, 1);
    assert.equal((await budget(limits, "file_write")).allowed, 1);
  });

  test("every client has its own counter", async () => {
    const limits = new RateLimits({ tools: { "*": "2/min" } });
    assert.equal((await budget(limits, "file_read", "key-a")).allowed, 2);
    assert.equal((await budget(limits, "file_read", "key-b")).allowed, 2);
  });

  test("method limits count per client and method; other methods pass", async () => {
    const limits = new RateLimits({ methods: { "tools/list": "1/min" } });
    assert.ok((await limits.checkMethod("a", "tools/list")).allowed);
    const refused = await limits.checkMethod("a", "tools/list");
    assert.equal(refused.allowed, false);
    assert.equal(refused.rule, "tools/list 1/min");
    assert.ok((await limits.checkMethod("b", "tools/list")).allowed);
    assert.ok((await limits.checkMethod("a", "prompts/list")).allowed);
  });

  test("method rules, like tool rules, take the most specific match whatever the config order", async () => {
    const limits = new RateLimits({ methods: { "tools/*": "1/min", "tools/list": "5/min" } });
    for (let i = 0; i < 5; i++) assert.ok((await limits.checkMethod("m", "tools/list")).allowed, `call ${i + 1}`);
    assert.equal((await limits.checkMethod("m", "tools/list")).rule, "tools/list 5/min");
  });
});

describe("rate windows", () => {
  test("a refusal says how long until the window ends, and the budget comes back when it has", async () => {
    // rate-limiter-flexible reads Date.now and setTimeout itself: mock.timers drives it as it drives the hub's clock
    mock.timers.enable({ apis: ["Date", "setTimeout"], now: 1_000_000 });
    try {
      const limits = new RateLimits({ tools: { "*": "2/min" } });
      assert.equal((await budget(limits, "file_read")).allowed, 2);
      mock.timers.tick(45_000);
      const refused = await limits.checkTool("c", "file_read");
      assert.equal(refused.allowed, false);
      assert.equal(refused.retryAfterMs, 15_000);
      mock.timers.tick(14_999);
      assert.equal((await limits.checkTool("c", "file_read")).allowed, false, "not before the window ends");
      mock.timers.tick(1);
      assert.equal((await budget(limits, "file_read")).allowed, 2, "a new window, the whole budget");
    } finally {
      mock.timers.reset();
    }
  });
});

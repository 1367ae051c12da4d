// The session and event-store limits read from the environment (hub/config/session-limits.ts).
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError } from "../../../hub/config/config.js";
import { sessionLimitsFromEnv } from "../../../hub/config/session-limits.js";

test("defaults: 16 MiB per session, 128 MiB in all, 1000 per tenant, 200 per client, 20 new sessions/s", () => {
  assert.deepEqual(sessionLimitsFromEnv({}), {
    eventStoreBytes: 16 * 1024 * 1024,
    eventStoreTotalBytes: 128 * 1024 * 1024,
    maxSessions: 1000,
    maxSessionsPerClient: 200,
    reclaimIdleMs: 60_000,
    sessionRate: { points: 20, seconds: 1 },
  });
});

test("each variable is read, and the churn limit turns off only by its own variable", () => {
  const limits = sessionLimitsFromEnv({ AGENTBOX_MAX_SESSIONS: "7", AGENTBOX_SESSION_RATE: "600/min", AGENTBOX_RATE_LIMITS: "off" });
  assert.equal(limits.maxSessions, 7);
  assert.deepEqual(limits.sessionRate, { points: 600, seconds: 60 });
  assert.equal(sessionLimitsFromEnv({ AGENTBOX_SESSION_RATE: "off" }).sessionRate, false);
});

test("bad values are refused with the variable and what it takes", () => {
  assert.throws(
    () => sessionLimitsFromEnv({ AGENTBOX_SESSION_RATE: "fast" }),
    (err: Error) => err instanceof ConfigError && /AGENTBOX_SESSION_RATE must be "off" or a rate like "20\/s"/.test(err.message),
  );
  assert.throws(() => sessionLimitsFromEnv({ AGENTBOX_EVENT_STORE_BYTES: "-1" }), /AGENTBOX_EVENT_STORE_BYTES must be a positive whole number/);
  assert.throws(() => sessionLimitsFromEnv({ AGENTBOX_MAX_SESSIONS_PER_CLIENT: "1.5" }), /AGENTBOX_MAX_SESSIONS_PER_CLIENT/);
});

// AGENTBOX_CONTEXT_TTL_MS: how long a context minted by hub_new_context lives at most (hub/config/config.ts).
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError, loadConfig } from "../../../hub/config/config.js";

test("a context lives a day unless AGENTBOX_CONTEXT_TTL_MS says otherwise", () => {
  assert.equal(loadConfig({}, {}).contextTtlMs, 24 * 3_600_000);
  assert.equal(loadConfig({}, { AGENTBOX_CONTEXT_TTL_MS: "5000" }).contextTtlMs, 5000);
});

test("a TTL no timer can hold, or not a positive number, is refused with the variable's name", () => {
  assert.throws(
    () => loadConfig({}, { AGENTBOX_CONTEXT_TTL_MS: String(30 * 24 * 3_600_000) }),
    (err: Error) => err instanceof ConfigError && /AGENTBOX_CONTEXT_TTL_MS may be at most/.test(err.message),
  );
  assert.throws(() => loadConfig({}, { AGENTBOX_CONTEXT_TTL_MS: "soon" }), /AGENTBOX_CONTEXT_TTL_MS/);
});

// The tasks' share of each server's slots and the budget of calls waiting for a slot (hub/config/config.ts):
// defaults, the config file, the environment over it, and bad values named with what they take.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { ConfigError, loadConfig } from "../../../hub/config/config.js";
import { tempDir } from "../../helpers/hub.js";

const withFile = (settings: Record<string, unknown>) => {
  const file = path.join(tempDir("agentbox-cfg-"), "agentbox.json");
  fs.writeFileSync(file, JSON.stringify(settings));
  return { config: file };
};

test("defaults: tasks hold at most half of a server's slots, and a tenant's waiting calls at most 64 MiB", () => {
  const config = loadConfig({}, {});
  assert.equal(config.taskSlotsPercent, 50);
  assert.equal(config.queuedCallBytes, 64 * 1024 * 1024);
});

test("the config file sets both; the environment overrides it", () => {
  const cli = withFile({ taskSlotsPercent: 25, queuedCallBytes: 1048576 });
  assert.deepEqual((({ taskSlotsPercent, queuedCallBytes }) => ({ taskSlotsPercent, queuedCallBytes }))(loadConfig(cli, {})), {
    taskSlotsPercent: 25,
    queuedCallBytes: 1048576,
  });
  const env = { AGENTBOX_TASK_SLOTS_PERCENT: "100", AGENTBOX_QUEUED_CALL_BYTES: "2048" };
  assert.equal(loadConfig(cli, env).taskSlotsPercent, 100);
  assert.equal(loadConfig(cli, env).queuedCallBytes, 2048);
});

test("a share that is no percentage, or a budget that is no positive number, is refused with the setting's name", () => {
  for (const value of ["0", "101", "half", "12.5"]) {
    assert.throws(
      () => loadConfig({}, { AGENTBOX_TASK_SLOTS_PERCENT: value }),
      (err: Error) => err instanceof ConfigError && /AGENTBOX_TASK_SLOTS_PERCENT/.test(err.message),
      value,
    );
  }
  assert.throws(() => loadConfig({}, { AGENTBOX_TASK_SLOTS_PERCENT: "150" }), /AGENTBOX_TASK_SLOTS_PERCENT is a percentage, 1 to 100, got "150"/);
  assert.throws(() => loadConfig({}, { AGENTBOX_QUEUED_CALL_BYTES: "-5" }), /AGENTBOX_QUEUED_CALL_BYTES must be a positive whole number/);
  assert.throws(
    () => loadConfig(withFile({ taskSlotsPercent: 0 }), {}),
    (err: Error) => err instanceof ConfigError && /taskSlotsPercent/.test(err.message),
  );
  assert.throws(() => loadConfig(withFile({ taskSlotsPercent: 120 }), {}), /taskSlotsPercent is a percentage of each server's slots, 1 to 100/);
});

// The tasks' share of each server's slots (hub/config/config.ts): its default, the config file, the
// environment over it, and bad values named with what they take.
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

test("default: tasks hold at most half of a server's slots", () => {
  assert.equal(loadConfig({}, {}).taskSlotsPercent, 50);
});

test("the config file sets it; the environment overrides it", () => {
  const cli = withFile({ taskSlotsPercent: 25 });
  assert.equal(loadConfig(cli, {}).taskSlotsPercent, 25);
  assert.equal(loadConfig(cli, { AGENTBOX_TASK_SLOTS_PERCENT: "100" }).taskSlotsPercent, 100);
});

test("a share that is no percentage is refused with the setting's name", () => {
  for (const value of ["0", "101", "half", "12.5"]) {
    assert.throws(
      () => loadConfig({}, { AGENTBOX_TASK_SLOTS_PERCENT: value }),
      (err: Error) => err instanceof ConfigError && /AGENTBOX_TASK_SLOTS_PERCENT/.test(err.message),
      value,
    );
  }
  assert.throws(() => loadConfig({}, { AGENTBOX_TASK_SLOTS_PERCENT: "150" }), /AGENTBOX_TASK_SLOTS_PERCENT is a percentage, 1 to 100, got "150"/);
  assert.throws(
    () => loadConfig(withFile({ taskSlotsPercent: 0 }), {}),
    (err: Error) => err instanceof ConfigError && /taskSlotsPercent/.test(err.message),
  );
  assert.throws(() => loadConfig(withFile({ taskSlotsPercent: 120 }), {}), /taskSlotsPercent is a percentage of each server's slots, 1 to 100/);
});

// A recording's share of the tenant's disk budget, as its server process counts it: the hub
// publishes a reading of the tenant's use every 2 s or so (longer on a busy machine), and between
// two readings what the recording wrote counts too. Taken afresh each time it was read, the same
// stale reading gave a recording the room it had already used, again and again (on a loaded
// machine a recording overran an 8 MiB budget by megabytes). Time is the test's: Date is mocked.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, describe, mock, test } from "node:test";
import { BUDGET_NOTE, startRecording } from "../../servers/lib/recordings.js";
import { DISK_BUDGET_FILE_ENV } from "../../servers/lib/disk-budget.js";
import { tempDir } from "../helpers/hub.js";
import { until } from "../helpers/wait.js";

const MIB = 1024 * 1024;
const CHUNK = 128 * 1024;

describe("a recording under a disk budget whose reading is stale", () => {
  const workspace = tempDir("agentbox-rec-budget-");
  const budgetFile = path.join(workspace, "budget.json");
  after(() => {
    mock.timers.reset();
    delete process.env[DISK_BUDGET_FILE_ENV];
    fs.rmSync(workspace, { recursive: true, force: true });
  });

  test("stops once it has written what the budget had left, however often the same reading is read again", async () => {
    // 7 of 8 MiB used, and the hub publishes nothing new while the recording runs
    fs.writeFileSync(budgetFile, JSON.stringify({ usedBytes: 7 * MIB, budgetBytes: 8 * MIB }));
    process.env[DISK_BUDGET_FILE_ENV] = budgetFile;
    mock.timers.enable({ apis: ["Date"], now: 1_000_000 });
    const recording = await startRecording(workspace, "session-1", "terminal", "asciicast", (note) => `${JSON.stringify(["end", note])}\n`);
    const chunk = Buffer.alloc(CHUNK, "x");
    for (let i = 0; i < 24 && recording.active; i++) {
      const before = recording.bytes;
      recording.write(chunk);
      await until("the chunk written or the recording stopped", () => recording.bytes > before || !recording.active, 10_000, 5);
      // each chunk after the reading has gone stale (it is trusted 250 ms): the same reading is read again
      mock.timers.tick(1000);
    }
    // (until's own deadline reads the mocked Date: each wait above ends on its condition, which comes at once)
    assert.equal(recording.active, false, `${recording.bytes} bytes written and still recording`);
    assert.equal(recording.note, BUDGET_NOTE);
    // the room left (1 MiB, less the margin kept for the end mark), not 3 MiB
    assert.ok(recording.bytes <= MIB, `${recording.bytes} bytes written`);
    assert.ok(recording.bytes >= MIB - 2 * CHUNK, `${recording.bytes} bytes written`);
  });
});

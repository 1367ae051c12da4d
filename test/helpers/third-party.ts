// Real third-party MCP servers from npm as users configure them, started from this checkout's
// node_modules: `npx --no-install` from the project's folder, npm offline, so nothing is fetched
// (a miss fails instead of asking the registry: there is a different package called
// mcp-server-filesystem on npm).
import path from "node:path";
import { distRoot } from "../../hub/config/config.js";

export const PROJECT_ROOT = path.resolve(distRoot(), "..");
export const NPM_OFFLINE = { npm_config_offline: "true", npm_config_update_notifier: "false" };

/** A server entry that starts an npm package's command by `npx` itself, or by a shell line (`bash -c "cd … && exec npx …"`). */
export const npxServer = (how: "npx" | "bash -c", ...command: string[]) =>
  how === "npx"
    ? { command: "npx", args: ["--no-install", ...command], cwd: PROJECT_ROOT, env: NPM_OFFLINE }
    : { command: "bash", args: ["-c", `cd '${PROJECT_ROOT}' && exec npx --no-install ${command.map((a) => `'${a}'`).join(" ")}`], env: NPM_OFFLINE };

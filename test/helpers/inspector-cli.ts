// The real MCP Inspector CLI (@modelcontextprotocol/inspector v2, a dev dependency), one process per
// command as a script or an agent runs it. It needs Node ≥ 22.19 (./node22.ts finds one). Each
// command connects, lists the tools and then does what it was asked; it never ends its session.
// Its home is a fresh folder: it keeps a catalog and stored secrets under ~/.mcp-inspector.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { distRoot } from "../../hub/config/config.js";
import { tempDir } from "./hub.js";
import { node22 } from "./node22.js";

const LAUNCHER = path.join(distRoot(), "..", "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js");

/** `--protocol-era`: legacy is the CLI's default for a URL (a 2025 session), modern is 2026-07-28. */
export type InspectorEra = "legacy" | "modern";

export interface InspectorRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout as the JSON object `--format json` prints, when it is one. */
  json?: { result?: Record<string, unknown>; error?: { code: string; message: string } };
}

export class InspectorCli {
  private readonly node = node22();
  private readonly home = tempDir("agentbox-inspector-");

  constructor(
    private readonly url: string,
    private readonly headers: Record<string, string> = {},
  ) {
    if (!fs.existsSync(this.node))
      throw new Error(`Node 22 not found at ${this.node}: run npm run setup (it installs one there on an older Node), or set AGENTBOX_NODE22.`);
    if (!fs.existsSync(LAUNCHER)) throw new Error(`MCP Inspector not found at ${LAUNCHER}: run npm install (it is a dev dependency).`);
  }

  /** One command (`--method …` and its options) in the given era; a command still running after `timeoutMs` is killed. */
  run(era: InspectorEra, args: string[], timeoutMs = 60_000): Promise<InspectorRun> {
    const eraArgs = era === "modern" ? ["--protocol-era", "modern"] : [];
    const headerArgs = Object.entries(this.headers).flatMap(([name, value]) => ["--header", `${name}: ${value}`]);
    // never an interactive OAuth flow: a refused key fails the command
    const cli = [LAUNCHER, "--cli", this.url, ...headerArgs, ...eraArgs, "--stored-auth-only", "--format", "json", "--quiet", ...args];
    const child = spawn(this.node, cli, {
      // the CLI reads MCP_* and its own variables: none of the test process's reach it
      env: { PATH: process.env.PATH ?? "", HOME: this.home, NODE_COMPILE_CACHE: path.join(this.home, "compile-cache") },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    return new Promise((resolve) =>
      child.once("close", (code) => {
        clearTimeout(timer);
        let json: InspectorRun["json"];
        try {
          json = JSON.parse(stdout) as InspectorRun["json"];
        } catch {
          // not JSON: the caller shows stdout and stderr
        }
        resolve({ code, stdout, stderr, json });
      }),
    );
  }

  cleanup(): void {
    fs.rmSync(this.home, { recursive: true, force: true });
  }
}

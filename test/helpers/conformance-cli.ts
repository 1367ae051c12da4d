// Runs the official MCP conformance CLI (server mode) with Node 22 and reads back the checks it
// recorded, one checks.json per scenario. Shared by the 2025-11-25 and 2026-07-28 harnesses, which
// differ only in the CLI package they run and the arguments they pass.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { distRoot } from "../../hub/config/config.js";
import { tempDir } from "./hub.js";
import { node22 } from "./node22.js";

export const PROJECT_ROOT = path.resolve(distRoot(), "..");
export const NODE22 = node22();

export interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | string;
  errorMessage?: string;
}

export interface SuiteRun {
  code: number | null;
  output: string;
  /** Checks per scenario, read from the results folders the CLI writes. */
  scenarios: Map<string, Check[]>;
}

/** The CLI's entry point inside node_modules/@modelcontextprotocol/<packageFolder>. */
export function conformanceCli(packageFolder: string): string {
  return path.join(PROJECT_ROOT, "node_modules", "@modelcontextprotocol", packageFolder, "dist", "index.js");
}

export function preflight(cli: string): void {
  if (!fs.existsSync(NODE22))
    throw new Error(`Node 22 not found at ${NODE22}: run npm run setup (it installs one there on an older Node), or set AGENTBOX_NODE22.`);
  if (!fs.existsSync(cli)) throw new Error(`Conformance suite not found at ${cli}: run npm install (it is a dev dependency).`);
}

/** Run the CLI's server mode; results go to a fresh folder, never into the repository. */
export async function runConformance(cli: string, url: string, extraArgs: string[], timeoutMs: number): Promise<SuiteRun> {
  const outDir = tempDir("agentbox-conformance-");
  const child = spawn(NODE22, [cli, "server", "--url", url, "--output-dir", outDir, ...extraArgs], {
    cwd: outDir,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  clearTimeout(timer);
  try {
    return { code, output, scenarios: readResults(outDir) };
  } finally {
    fs.rmSync(outDir, { recursive: true, force: true });
  }
}

// The CLI writes one folder per scenario: server-<scenario>-<ISO timestamp with : and . as ->/checks.json
function readResults(outDir: string): Map<string, Check[]> {
  const scenarios = new Map<string, Check[]>();
  for (const entry of fs.readdirSync(outDir)) {
    const match = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry);
    const file = path.join(outDir, entry, "checks.json");
    if (!match || !fs.existsSync(file)) continue;
    scenarios.set(match[1], JSON.parse(fs.readFileSync(file, "utf8")) as Check[]);
  }
  return scenarios;
}

export function failures(run: SuiteRun): string[] {
  return [...run.scenarios].flatMap(([scenario, checks]) =>
    checks.filter((c) => c.status === "FAILURE").map((c) => `${scenario} / ${c.id}: ${c.errorMessage ?? "failed"}`),
  );
}

export function explain(run: SuiteRun): string {
  const failed = failures(run);
  const summary = run.output.slice(run.output.lastIndexOf("SUMMARY ==="));
  return `exit code ${run.code}\n${failed.join("\n") || "(no failing checks recorded)"}\n${summary || run.output.slice(-3000)}`;
}

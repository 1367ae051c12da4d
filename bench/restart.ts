// A second `npm start` with nothing changed, timed from the command to /readyz answering 200: what
// a person waits for each time they restart the hub. The first run builds whatever is stale (and is
// reported apart); the following ones should find every build step up to date (scripts/build.mjs).
import { spawn } from "node:child_process";
import fs from "node:fs";
import readline from "node:readline";
import { writeResult } from "./results.js";
import { spread } from "./stats.js";
import { projectRoot, tempDir, waitHubReady } from "./targets.js";

const REPEATS = Number(process.env.BENCH_RESTART_REPEATS ?? 5);
const READY_TIMEOUT_MS = 120_000;
/** Issue 28: a second `npm start` is ready in under 2 s on this machine. */
export const RESTART_TARGET_MS = 2000;

interface StartRun {
  readyMs: number;
  buildSteps: string[];
}

/** `npm start` on a free port in its own process group; resolves once /readyz says ready, then stops it. */
async function timeNpmStart(workspace: string): Promise<StartRun> {
  const t0 = performance.now();
  const child = spawn("npm", ["start", "--silent"], {
    cwd: projectRoot(),
    env: { ...process.env, AGENTBOX_PORT: "0", AGENTBOX_WORKSPACE: workspace, AGENTBOX_LOG_LEVEL: "info", AGENTBOX_RATE_LIMITS: "off" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const buildSteps: string[] = [];
  const origin = new Promise<string>((resolve, reject) => {
    const onLine = (line: string) => {
      if (line.startsWith("build: ")) buildSteps.push(line.slice(7));
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === "listening" && entry.url) resolve(entry.url);
      } catch {
        // npm's and the build's plain lines
      }
    };
    readline.createInterface({ input: child.stdout! }).on("line", onLine);
    readline.createInterface({ input: child.stderr! }).on("line", onLine);
    child.once("exit", (code) => reject(new Error(`npm start exited with ${code}`)));
  });
  try {
    const url = await origin;
    if (!(await waitHubReady(url, READY_TIMEOUT_MS, 5))) throw new Error(`not ready within ${READY_TIMEOUT_MS} ms`);
    return { readyMs: performance.now() - t0, buildSteps };
  } finally {
    const exited = new Promise((r) => child.once("exit", r));
    // the group: npm, its shell and the hub (which stops its children on SIGTERM)
    if (child.exitCode === null) process.kill(-child.pid!, "SIGTERM");
    await exited;
  }
}

export async function runRestart(log: (msg: string) => void): Promise<Record<string, unknown>> {
  const workspace = tempDir("agentbox-bench-restart-");
  try {
    const first = await timeNpmStart(workspace);
    log(`restart: first npm start ready in ${first.readyMs.toFixed(0)} ms (${first.buildSteps.join("; ") || "built"})`);
    const again: StartRun[] = [];
    for (let r = 0; r < REPEATS; r++) {
      again.push(await timeNpmStart(workspace));
      log(`restart: npm start ${r + 2} ready in ${again.at(-1)!.readyMs.toFixed(0)} ms`);
    }
    const stale = again.flatMap((run) => run.buildSteps.filter((s) => !s.endsWith("up to date")));
    const readyMs = spread(
      again.map((r) => r.readyMs),
      0,
    );
    const result = {
      method: `npm start (build, then the hub with the built-in servers, lazy) with AGENTBOX_PORT=0, timed from spawning npm to /readyz answering 200 (polled every 5 ms); one first run, then ${REPEATS} with nothing changed`,
      firstStartMs: Math.round(first.readyMs),
      firstBuildSteps: first.buildSteps,
      secondStartMs: readyMs,
      rebuiltOnSecondStart: stale,
      target: { readyMs: RESTART_TARGET_MS, met: readyMs.median < RESTART_TARGET_MS && stale.length === 0 },
    };
    writeResult("restart", result);
    return result;
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
  }
}

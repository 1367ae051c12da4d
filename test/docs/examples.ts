// What the examples test needs besides Markdown: the markers that say how an example is checked,
// a scratch folder that sees the checkout, ports the examples name (moved when taken), and running
// a shell example to its end or serving one until Ctrl-C.
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { tempDir } from "../helpers/hub.js";
import type { CodeBlock } from "./markdown.js";
import { root } from "./project.js";

/** How an example is checked, from its `<!-- example: … -->` marker (docs/development.md lists them). */
export type Check =
  | { kind: "config" }
  | { kind: "client" }
  | { kind: "output"; auditTrail: boolean }
  | { kind: "run"; withHub: boolean; prints?: string }
  | { kind: "serves"; url: string }
  | { kind: "needs"; what: string };

/** The languages whose fenced blocks are examples that must be run or marked. */
export const EXAMPLE_LANGUAGES: Record<string, "json" | "shell"> = { json: "json", jsonc: "json", jsonl: "json", sh: "shell", bash: "shell", shell: "shell" };

const KINDS_OF: Record<"json" | "shell", string[]> = { json: ["config", "client", "output", "needs"], shell: ["run", "serves", "needs"] };

/** The check a block's marker asks for, or why the marker is wrong. */
export function checkOf(block: CodeBlock): Check | { error: string } {
  const marker = block.marker;
  const language = EXAMPLE_LANGUAGES[block.language];
  if (marker === undefined) return { error: "no <!-- example: … --> marker before it" };
  let check: Check | undefined;
  const run = /^run( with a hub on 8080)?(?:; prints "(.+)")?$/.exec(marker);
  if (marker === "config" || marker === "client") check = { kind: marker };
  else if (marker === "output" || marker === "output: audit trail") check = { kind: "output", auditTrail: marker !== "output" };
  else if (run) check = { kind: "run", withHub: Boolean(run[1]), ...(run[2] ? { prints: run[2] } : {}) };
  else if (/^serves http:\/\/\S+$/.test(marker)) check = { kind: "serves", url: marker.slice("serves ".length) };
  else if (/^needs \S/.test(marker)) check = { kind: "needs", what: marker.slice("needs ".length) };
  if (!check) return { error: `the marker "${marker}" is none the test knows` };
  if (!KINDS_OF[language].includes(check.kind))
    return { error: `a ${block.language} block cannot be "${check.kind}" (it can be ${KINDS_OF[language].join(", ")})` };
  return check;
}

/**
 * A folder to run examples in, as a reader runs them from the checkout: every top-level entry of the
 * checkout is linked into it, so `node dist/bundle/hub/main.js` and `npm start` work, while what an example
 * writes (nginx.conf, a workspace) stays in the scratch folder. Traversable by a tenant's uid.
 */
export function scratchCheckout(): string {
  const dir = tempDir("agentbox-docs-");
  fs.chmodSync(dir, 0o755);
  for (const entry of fs.readdirSync(root)) {
    if (entry === "workspace" || entry === ".git") continue;
    fs.symlinkSync(path.join(root, entry), path.join(dir, entry));
  }
  return dir;
}

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const NAMED_PORT = /(?<![\d.])(80\d\d)(?!\d)/g;

/**
 * The ports 80xx an example names, each mapped to itself when it is free and to a free port when
 * something on this machine holds it (then `note` says so): examples run as printed wherever they can.
 */
export async function portsFor(texts: string[], note: (message: string) => void, taken: ReadonlySet<number> = new Set()): Promise<Map<number, number>> {
  const ports = new Map<number, number>();
  for (const text of texts) {
    for (const match of text.matchAll(NAMED_PORT)) {
      const port = Number(match[1]);
      if (ports.has(port)) continue;
      if (!taken.has(port) && (await portIsFree(port))) ports.set(port, port);
      else {
        const moved = await freePort();
        note(`port ${port} is taken on this machine: the example runs with ${moved} in its place`);
        ports.set(port, moved);
      }
    }
  }
  return ports;
}

export const withPorts = (text: string, ports: ReadonlyMap<number, number>) =>
  text.replace(NAMED_PORT, (all, port: string) => String(ports.get(Number(port)) ?? all));

export interface Ran {
  code: number | null;
  output: string;
}

/** Runs a shell example with bash (every command must succeed) in `cwd`; ended after `timeoutMs`. */
export async function runShell(code: string, cwd: string, timeoutMs = 180_000): Promise<Ran> {
  const child = spawn("bash", ["-e", "-o", "pipefail", "-c", code], { cwd, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d));
  child.stderr.on("data", (d: Buffer) => (output += d));
  const timer = setTimeout(() => endGroup(child.pid!, "SIGKILL"), timeoutMs);
  const code_ = await new Promise<number | null>((resolve) => child.once("close", (exit) => resolve(exit)));
  clearTimeout(timer);
  endGroup(child.pid!, "SIGKILL");
  return { code: code_, output };
}

function endGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group has ended
  }
}

const groupAlive = (pid: number) => {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * Serves a shell example: started in its own process group, `url` polled until it answers 200, then
 * Ctrl-C (SIGINT to the group, as a terminal sends it). Resolves with what it printed once every
 * process of the group has ended; rejects (after ending them) when it exits before serving or
 * `url` never answers.
 */
export async function serveShell(code: string, cwd: string, url: string, timeoutMs = 120_000): Promise<string> {
  const child = spawn("bash", ["-c", code], { cwd, stdio: ["ignore", "pipe", "pipe"], detached: true });
  const pid = child.pid!;
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d));
  child.stderr.on("data", (d: Buffer) => (output += d));
  let exited = false;
  child.once("exit", () => (exited = true));
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const status = await fetch(url, { signal: AbortSignal.timeout(2000) }).then(
        (res) => res.status,
        () => 0,
      );
      if (status === 200) break;
      if (exited) throw new Error(`it exited before ${url} answered 200:\n${output}`);
      if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs / 1000} s (last: ${status || "no answer"}):\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    endGroup(pid, "SIGINT");
    // what a reader's Ctrl-C does not reach (jobs started with &) is ended too, then waited for
    for (const [signal, waitMs] of [
      ["SIGINT", 20_000],
      ["SIGTERM", 20_000],
      ["SIGKILL", 5_000],
    ] as const) {
      endGroup(pid, signal);
      const until = Date.now() + waitMs;
      while (groupAlive(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      if (!groupAlive(pid)) break;
    }
    return output;
  } finally {
    endGroup(pid, "SIGKILL");
  }
}

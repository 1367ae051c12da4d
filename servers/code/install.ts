// Installing packages for the sessions: pip into a venv that sees the system's packages (numpy,
// matplotlib stay importable) and npm into one project folder the JavaScript sessions resolve
// imports from. Both use whatever package indexes pip and npm are configured with
// (PIP_INDEX_URL, pip.conf, .npmrc, npm_config_registry); local folders and archives work too.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ToolError } from "../lib/tool.js";
import { resolveInWorkspace } from "../lib/workspace.js";
import { nodeEnv, pythonVenv, type CodeConfig } from "./config.js";
import type { Language } from "./kernel.js";
import { TailBuffer } from "./output.js";

export interface RunResult {
  code: number | null;
  output: string;
}

/** Run a command, stdout and stderr interleaved and capped, stopped by timeout or abort. */
export function runProcess(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number; signal: AbortSignal; maxOutput: number },
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const output = new TailBuffer(options.maxOutput);
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.setEncoding("utf8").on("data", (c: string) => output.push(c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => output.push(c));
    let stopped: string | undefined;
    const stop = (why: string) => {
      stopped = why;
      child.kill("SIGKILL");
    };
    const timer = setTimeout(() => stop(`timed out after ${options.timeoutMs} ms`), options.timeoutMs);
    const onAbort = () => stop("cancelled");
    options.signal.addEventListener("abort", onAbort, { once: true });
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(new ToolError(`Could not run ${command}: ${err.message}`));
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      options.signal.removeEventListener("abort", onAbort);
      if (stopped) reject(new ToolError(`${command} ${args.slice(0, 3).join(" ")} … ${stopped}.\n${output.text()}`));
      else resolve({ code, output: output.text() });
    });
  });
}

const LOCAL_ARCHIVE = /\.(whl|tar\.gz|tgz|zip|tar\.bz2)$/i;

/**
 * A package spec as given, or the real path of a local folder or archive in the workspace.
 * Options are refused: a spec like "--index-url=…" would let a package list rewrite the command.
 */
export function resolveSpec(spec: string, workspace: string): { spec: string; local: boolean } {
  const trimmed = spec.trim();
  if (!trimmed) throw new ToolError("An empty package name was given.");
  if (trimmed.startsWith("-")) throw new ToolError(`'${trimmed}' looks like a command-line option; give package names, versions, or paths only.`);
  const looksLocal = /^(\.{1,2}\/|\/|file:)/.test(trimmed) || LOCAL_ARCHIVE.test(trimmed) || fs.existsSync(path.join(workspace, trimmed));
  if (!looksLocal || /^[a-z+]+:\/\//i.test(trimmed)) return { spec: trimmed, local: false };
  return { spec: resolveInWorkspace(workspace, trimmed), local: true };
}

let venvReady: Promise<void> | undefined;

/** The install venv, created once; --system-site-packages keeps the system's numpy and matplotlib visible. */
function ensureVenv(config: CodeConfig, signal: AbortSignal): Promise<void> {
  const venv = pythonVenv(config);
  if (fs.existsSync(path.join(venv, "bin", "python"))) return Promise.resolve();
  venvReady ??= (async () => {
    fs.mkdirSync(config.dataDir, { recursive: true });
    const made = await runProcess(config.python, ["-m", "venv", "--system-site-packages", venv], {
      cwd: config.dataDir,
      timeoutMs: config.installTimeoutMs,
      signal,
      maxOutput: 4000,
    });
    if (made.code !== 0) {
      throw new ToolError(`Could not create the Python environment ${venv} (is python3-venv installed?):\n${made.output}`);
    }
  })().finally(() => (venvReady = undefined));
  return venvReady;
}

function ensureNodeEnv(config: CodeConfig): string {
  const dir = nodeEnv(config);
  fs.mkdirSync(dir, { recursive: true });
  const manifest = path.join(dir, "package.json");
  if (!fs.existsSync(manifest)) {
    fs.writeFileSync(manifest, JSON.stringify({ name: "agentbox-code-env", private: true, description: "Packages installed by code_install" }, null, 2));
  }
  return dir;
}

export interface InstallRequest {
  language: Language;
  packages: string[];
  workspace: string;
  signal: AbortSignal;
}

export async function install(config: CodeConfig, request: InstallRequest): Promise<RunResult & { command: string }> {
  const specs = request.packages.map((p) => resolveSpec(p, request.workspace));
  const common = { cwd: request.workspace, timeoutMs: config.installTimeoutMs, signal: request.signal, maxOutput: config.maxOutputChars };
  if (request.language === "python") {
    await ensureVenv(config, request.signal);
    const args = ["-m", "pip", "install", "--disable-pip-version-check", "--no-input"];
    // a local source folder builds with the setuptools already installed instead of fetching
    // build dependencies from an index (which may be unreachable)
    if (specs.some((s) => s.local && fs.statSync(s.spec).isDirectory())) args.push("--no-build-isolation");
    args.push(...specs.map((s) => s.spec));
    const python = path.join(pythonVenv(config), "bin", "python");
    const result = await runProcess(python, args, { ...common, env: { ...process.env, PIP_NO_INPUT: "1" } });
    return { ...result, command: `pip ${args.slice(2).join(" ")}` };
  }
  const dir = ensureNodeEnv(config);
  // --install-links copies a local folder instead of linking to it, so the package stays when the folder goes
  const args = ["install", "--no-audit", "--no-fund", "--install-links", ...specs.map((s) => s.spec)];
  const result = await runProcess("npm", args, { ...common, cwd: dir });
  return { ...result, command: `npm ${args.join(" ")}` };
}

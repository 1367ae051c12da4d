// Installing packages for the sessions: pip into a venv that sees the system's packages (numpy,
// matplotlib stay importable) and npm into one project folder the JavaScript sessions resolve
// imports from. Both use whatever package indexes pip and npm are configured with
// (PIP_INDEX_URL, pip.conf, .npmrc, npm_config_registry); local folders and archives inside the
// workspace work too. What a spec may look like is an allowlist (ALLOWED_SPECS), not a blocklist.
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
/** Remote sources: plain http(s) archives and git over https; no other scheme (git+file, git+ssh, …). */
const URL_SOURCE = /^(git\+)?https?:\/\/\S+$/i;
/** pip: a name with optional extras, then version clauses and an environment marker, none of which can name a path. */
const PIP_REQUIREMENT =
  /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?(?:\s*\[[A-Za-z0-9._,\s-]*\])?(?:\s*(?:[<>=!~]=?|===)[\s<>=!~,.*+A-Za-z0-9_-]*)?(?:\s*;[\sA-Za-z0-9_.<>=!~"'()-]*)?$/;
/** pip's `name @ <url>` direct reference. */
const PIP_DIRECT = /^[A-Za-z0-9][A-Za-z0-9._-]*(?:\s*\[[A-Za-z0-9._,\s-]*\])?\s*@\s*(\S+)$/;
/** npm: a (scoped) name with an optional version, range or tag, none of which can name a path or URL. */
const NPM_PACKAGE = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*(?:@[A-Za-z0-9.^~<>=*|+\s-]*)?$/i;
/** npm's `name@file:…` / `name@link:…` and bare `file:…` / `link:…` local references. */
const NPM_LOCAL = /^(?:(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*@)?(?:file|link):(.*)$/i;

export const ALLOWED_SPECS: Record<Language, string> = {
  python:
    "a package name with optional extras, version and marker (requests, requests[socks]>=2.31, numpy==2.0; python_version>'3.9'), " +
    "an https URL of an archive or a git+https repository (also as name @ https://…), or a folder or archive inside the workspace " +
    "(./mypkg, dist/pkg-1.0-py3-none-any.whl, file:///<workspace>/pkg)",
  javascript:
    "a package name with an optional version, range or tag (lodash, lodash@^4.17, @scope/pkg@latest), an https URL of a tarball or " +
    "a git+https repository, or a folder or tarball inside the workspace (./mypkg, pkg-1.0.0.tgz, file:./mypkg)",
};

/**
 * A package spec as given, or the real path of a local folder or archive in the workspace. The
 * spec must fit one of the allowed shapes (ALLOWED_SPECS): anything else is refused rather than
 * handed to pip or npm, which would read options (-r, --find-links, --prefix…) and local paths
 * from it. Local sources go through the workspace guard and are passed on as real paths.
 */
export function resolveSpec(spec: string, workspace: string, language: Language = "python"): { spec: string; local: boolean } {
  const trimmed = spec.trim();
  if (!trimmed) throw new ToolError("An empty package name was given.");
  const allowed = `Allowed: ${ALLOWED_SPECS[language]}.`;
  if (trimmed.startsWith("-")) throw new ToolError(`'${trimmed}' looks like a command-line option, which code_install does not pass on. ${allowed}`);
  if (/[\0\r\n]/.test(trimmed)) throw new ToolError(`'${JSON.stringify(trimmed)}' contains a control character. ${allowed}`);
  if (URL_SOURCE.test(trimmed)) return { spec: trimmed, local: false };
  const local = (where: string) => {
    try {
      return { spec: resolveInWorkspace(workspace, where), local: true };
    } catch (err) {
      throw err instanceof ToolError ? new ToolError(`${err.message} ${allowed}`) : err;
    }
  };
  const npmLocal = language === "javascript" ? NPM_LOCAL.exec(trimmed) : null;
  const fileRef = npmLocal ? `file:${npmLocal[1]}` : language === "python" ? (/^file:/i.test(trimmed) ? trimmed : PIP_DIRECT.exec(trimmed)?.[1]) : undefined;
  if (fileRef) {
    if (URL_SOURCE.test(fileRef)) return { spec: trimmed, local: false };
    if (!/^file:/i.test(fileRef)) throw new ToolError(`'${trimmed}' uses a source other than https or a workspace file. ${allowed}`);
    return local(filePath(fileRef, trimmed, allowed));
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(trimmed) && !(language === "javascript" && NPM_PACKAGE.test(trimmed))) {
    throw new ToolError(`'${trimmed}' uses a source other than https or a workspace file. ${allowed}`);
  }
  const pathLike = /^\.{0,2}\//.test(trimmed) || (trimmed.includes("/") && !(language === "javascript" && NPM_PACKAGE.test(trimmed)));
  if (pathLike || LOCAL_ARCHIVE.test(trimmed) || fs.existsSync(path.join(workspace, trimmed))) return local(trimmed);
  if ((language === "python" ? PIP_REQUIREMENT : NPM_PACKAGE).test(trimmed)) return { spec: trimmed, local: false };
  throw new ToolError(`'${trimmed}' is not a package spec code_install accepts. ${allowed}`);
}

/** The path a file: reference names: file:///abs, file://localhost/abs, or file:rel (relative to the workspace). */
function filePath(ref: string, spec: string, allowed: string): string {
  if (!/^file:\/\//i.test(ref)) return decodeURIComponent(ref.slice("file:".length)) || ".";
  let url: URL;
  try {
    url = new URL(ref);
  } catch {
    throw new ToolError(`'${spec}' has a malformed file: URL. ${allowed}`);
  }
  if (url.host && url.host !== "localhost") throw new ToolError(`'${spec}' names a file on another host. ${allowed}`);
  return decodeURIComponent(url.pathname);
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
  const specs = request.packages.map((p) => resolveSpec(p, request.workspace, request.language));
  // never the workspace as working folder: pip would take a bare name that is also a folder there
  // (planted after the check) as a local source; local sources are passed as checked real paths
  const common = { cwd: config.dataDir, timeoutMs: config.installTimeoutMs, signal: request.signal, maxOutput: config.maxOutputChars };
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

// Settings of the code server, all from the environment, and where its driver files live.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export interface CodeConfig {
  python: string;
  /** Where the install environments live (the Python venv, the npm folder). */
  dataDir: string;
  /** The Python driver folder (driver.py and the agentbox package). */
  pythonDir: string;
  /** The compiled JavaScript driver. */
  jsDriver: string;
  defaultTimeoutMs: number;
  maxTimeoutMs: number;
  /** After SIGINT, how long the code gets to stop before the interpreter is killed. */
  interruptGraceMs: number;
  /** Characters kept per stream (stdout, stderr, the shown value); the tail is kept. */
  maxOutputChars: number;
  idleMs: number;
  installTimeoutMs: number;
}

const here = path.dirname(fileURLToPath(import.meta.url));

function intEnv(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

// The .py files are not compiled into dist/: find them in the source tree next to it (the
// image copies the whole checkout), or next to this file when run from source.
function findPythonDir(): string {
  const candidates = [path.join(here, "python"), path.resolve(here, "../../../servers/code/python")];
  const found = candidates.find((dir) => fs.existsSync(path.join(dir, "driver.py")));
  if (!found) throw new Error(`code server: driver.py not found in ${candidates.join(" or ")}`);
  return found;
}

function defaultPython(): string {
  return fs.existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
}

export function loadConfig(): CodeConfig {
  const defaultTimeoutMs = intEnv("AGENTBOX_CODE_TIMEOUT_MS", 60_000);
  return {
    python: process.env.AGENTBOX_PYTHON || defaultPython(),
    dataDir: path.resolve(process.env.AGENTBOX_CODE_DATA_DIR || path.join(os.homedir(), ".cache", "agentbox", "code")),
    pythonDir: findPythonDir(),
    jsDriver: path.join(here, "js", "driver.js"),
    defaultTimeoutMs,
    // below the hub's default 5-minute call timeout, so an interrupt and restart fit inside it
    maxTimeoutMs: Math.max(defaultTimeoutMs, intEnv("AGENTBOX_CODE_MAX_TIMEOUT_MS", 280_000)),
    interruptGraceMs: intEnv("AGENTBOX_CODE_INTERRUPT_GRACE_MS", 2_000),
    maxOutputChars: intEnv("AGENTBOX_CODE_MAX_OUTPUT", 50_000),
    idleMs: intEnv("AGENTBOX_CODE_IDLE_MS", 30 * 60_000),
    installTimeoutMs: intEnv("AGENTBOX_CODE_INSTALL_TIMEOUT_MS", 300_000),
  };
}

/** The venv `install` puts Python packages in; created with --system-site-packages on first use. */
export const pythonVenv = (config: CodeConfig) => path.join(config.dataDir, "python-venv");
/** The npm project `install` puts JavaScript packages in; sessions resolve imports from it. */
export const nodeEnv = (config: CodeConfig) => path.join(config.dataDir, "node-env");

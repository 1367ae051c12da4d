// Why a child failed to start or stopped: the lines of its stderr that say so, how it ended
// (exit code or signal), and for a command that could not be run, where the hub looked for it.
// A server's error is rarely its last line (Node ends a crash with "Node.js v20…"), so the
// informative lines are picked from the first and last ones the child wrote.
import fs from "node:fs";
import path from "node:path";
import type { StderrMemory } from "./stderr.js";

/** How a process ended, as Node reports it on "close". */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const INFORMATIVE = /error|cannot|can't|could not|couldn't|not found|no such|denied|not permitted|fatal|panic|traceback|exception|failed|invalid|missing/i;
const ERRNO = /\bE[A-Z]{3,}\b/; // ENOENT, EACCES, EADDRINUSE...
// stack frames and source excerpts say where, not what; a structured line below warn is routine
const NOISE = /^\s+at |^\s*\^+\s*$|^\s*throw\b|^Node\.js v\d|^\{.*"level":"(debug|info)"/;
const MAX_LINES = 4;
const MAX_CHARS = 1200;

/** The lines of stderr that best say what went wrong: the informative ones, else the first ones. */
export function telling(memory: StderrMemory, prefer: "first" | "last"): string[] {
  const lines = memory.lines.filter((l) => !NOISE.test(l));
  const informative = lines.filter((l) => INFORMATIVE.test(l) || ERRNO.test(l));
  const pool = informative.length ? informative : lines;
  return prefer === "first" ? pool.slice(0, MAX_LINES) : pool.slice(-MAX_LINES);
}

function describeExit(exit: ProcessExit | undefined): string | undefined {
  if (!exit) return undefined;
  if (exit.signal) return `killed by signal ${exit.signal}`;
  return exit.code === null ? undefined : `exit code ${exit.code}`;
}

/** One message: what happened (to which process), how it ended, and what it said. Bounded in length. */
export function failureMessage(what: string, exit: ProcessExit | undefined, said: string[], pid?: number): string {
  const details = [pid ? `pid ${pid}` : undefined, describeExit(exit)].filter(Boolean);
  const head = details.length ? `${what} (${details.join(", ")})` : what;
  const text = said.length ? `${head}: ${said.join(" | ")}` : head;
  return text.length > MAX_CHARS ? `${text.slice(0, MAX_CHARS)}…` : text;
}

/**
 * Why a command could not be run, checked the way spawn looks for it: a path is taken from the
 * working directory, a bare name from PATH. Undefined when the command is there and executable.
 */
export function missingCommand(command: string, cwd: string | undefined, envPath: string | undefined): string | undefined {
  const where = cwd ?? process.cwd();
  if (cwd && !isDirectory(cwd)) return `its working directory ${cwd} does not exist or is not a folder`;
  if (command.includes("/")) {
    const full = path.resolve(where, command);
    if (!fs.existsSync(full)) return `the command ${full} does not exist (working directory ${where})`;
    return executable(full) ? undefined : `the command ${full} is not executable`;
  }
  const dirs = (envPath ?? "").split(path.delimiter).filter(Boolean);
  if (dirs.some((dir) => executable(path.join(dir, command)))) return undefined;
  return `the command '${command}' is not in PATH (${dirs.join(path.delimiter) || "empty"}; working directory ${where})`;
}

function isDirectory(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

function executable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

// Resolve the program a terminal runs, so a typo is a clear error instead of a pty that prints
// "execvp failed" and exits.
import fs from "node:fs";
import path from "node:path";
import { ToolError } from "../lib/tool.js";

/** Whether `file` is a regular file this process may execute. */
export function executable(file: string): boolean {
  try {
    return fs.statSync(file).isFile() && (fs.accessSync(file, fs.constants.X_OK), true);
  } catch {
    return false;
  }
}

export function defaultShell(): string {
  const shell = process.env.SHELL;
  return shell && executable(shell) ? shell : "/bin/bash";
}

export function resolveProgram(name: string): string {
  if (name.includes("/")) {
    if (path.isAbsolute(name) && executable(name)) return name;
    throw new ToolError(`Program '${name}' is not an executable file; give an absolute path or a name on PATH (e.g. bash, sh, python3).`);
  }
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (dir && executable(path.join(dir, name))) return path.join(dir, name);
  }
  throw new ToolError(`Program '${name}' was not found on PATH; give an absolute path or a name on PATH (e.g. bash, sh, python3).`);
}

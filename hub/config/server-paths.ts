// Relative file paths in a config file's stdio server entries, made absolute. A child runs with
// its tenant's workspace as working directory, so a relative `dist/servers/browser/main.js` left
// as written would point into the workspace; and the hub itself may be started from anywhere (a
// desktop client starts it in "/"). The rule: a relative path is looked up in the config file's
// folder, then in the agentbox install root (the folder holding dist/); the first that exists wins.
// An entry with its own `cwd` keeps its paths for that folder, as the operating system reads them.
// A file found nowhere makes its entry unstartable (it fails alone, saying what was tried); only a
// config file that does not parse or fit the schema stops the hub.
import fs from "node:fs";
import path from "node:path";
import type { ServerConfig } from "./schema.js";

/** Endings that mark an argument as a file to run (a script), never a package name or a word. */
const SCRIPT_ENDING = /\.(?:[cm]?js|ts|py|sh|rb|pl|php|jar)$/i;

/**
 * Whether a command or argument names a file relative to some folder: `./x`, `../x`, `dir/x` or a
 * script (`server.py`). Flags (`-y`, `--config=a/b`), scoped npm packages (`@scope/name`), URLs and
 * other `scheme:` forms (`git+https://…`, `pkg@npm:x`) are left as they are, and so is anything
 * holding whitespace: a shell command (`bash -c "cd /srv && exec node server.js"`) or a sentence.
 */
function looksLikeRelativePath(value: string): boolean {
  if (path.isAbsolute(value) || /\s/.test(value)) return false;
  if (value.startsWith("-") || value.startsWith("@") || value.startsWith("~") || value.includes(":")) return false;
  return value.includes("/") || SCRIPT_ENDING.test(value);
}

/** Written to be a file: relative to a folder, or a script. `owner/name` alone may be a package spec. */
function clearlyAFile(value: string): boolean {
  return value.startsWith("./") || value.startsWith("../") || SCRIPT_ENDING.test(value);
}

/** A value resolved: the path to use, or why the file it names cannot be used. */
interface Resolved {
  value: string;
  notFound?: string;
}

/**
 * @param bases the folders to look in, in order
 * @returns the absolute path of the first that exists; the value unchanged when it is no path, or
 *   a path-like word found nowhere that may be a package spec; for a file found nowhere, the
 *   value as written (never run: its entry is unstartable) and what was tried
 */
function resolveOne(value: string, bases: string[], where: string): Resolved {
  if (!looksLikeRelativePath(value)) return { value };
  const tried = bases.map((base) => path.resolve(base, value));
  const found = tried.find((candidate) => fs.existsSync(candidate));
  if (found) return { value: found };
  if (!clearlyAFile(value)) return { value };
  return {
    value,
    notFound:
      `${where}: '${value}' was not found; tried ${tried.join(", ")}. ` +
      "A relative path is looked up in the config file's folder, then in the agentbox install folder; give an absolute path otherwise.",
  };
}

/**
 * The config's stdio entries with relative paths in `command` and `args` made absolute (see the
 * rule above); a relative `cwd` is taken from the config file's folder. An entry naming a file
 * found nowhere keeps its values and says why in `unstartable`.
 * @param configDir the config file's folder
 * @param installRoot the folder holding this build's dist/
 */
export function resolveServerPaths(servers: Record<string, ServerConfig>, configDir: string, installRoot: string, file: string): Record<string, ServerConfig> {
  const resolved: Record<string, ServerConfig> = {};
  for (const [name, entry] of Object.entries(servers)) {
    if (!entry.command) {
      resolved[name] = entry;
      continue;
    }
    const cwd = entry.cwd === undefined ? undefined : path.resolve(configDir, entry.cwd);
    const bases = cwd ? [cwd] : [configDir, installRoot];
    const where = `Config file ${file}: mcpServers.${name}`;
    const command = resolveOne(entry.command, bases, `${where}.command`);
    const args = entry.args?.map((arg, i) => resolveOne(arg, bases, `${where}.args[${i}]`));
    const notFound = [command, ...(args ?? [])].flatMap((r) => (r.notFound ? [r.notFound] : []));
    resolved[name] = {
      ...entry,
      command: command.value,
      ...(args && { args: args.map((r) => r.value) }),
      ...(cwd && { cwd }),
      ...(notFound.length > 0 && { unstartable: notFound.join(" ") }),
    };
  }
  return resolved;
}

// The names a client (and the model behind it) sees for this server's tools. A child names its
// tools without a prefix (`write`); the hub publishes them as `<prefix>_<tool>` (`file_write`) and
// tells the child its prefix in AGENTBOX_TOOL_PREFIX. Any text that names a sibling tool, in a
// description, a result or an error, must use the published name: a model calls what it reads.

/** Set by the hub for each child: the prefix its tools are published under ("" means none). */
export const TOOL_PREFIX_ENV = "AGENTBOX_TOOL_PREFIX";

/** How the hub joins a prefix and a tool name (hub/catalog/catalog.ts publishes with this). */
export function joinToolName(prefix: string, name: string): string {
  return prefix ? `${prefix}_${name}` : name;
}

interface Naming {
  prefix: string;
  known: ReadonlySet<string>;
}

let naming: Naming | undefined;

/**
 * Fixes this process's prefix (from AGENTBOX_TOOL_PREFIX, else the server's own name, which is the
 * prefix the built-in config gives it) and the tools it serves. Called once by `serve()` before it
 * registers the tools, so descriptions built at registration can name their siblings.
 */
export function configureToolNames(serverName: string, tools: readonly string[], env: NodeJS.ProcessEnv = process.env): string {
  const prefix = env[TOOL_PREFIX_ENV] ?? serverName;
  naming = { prefix, known: new Set(tools) };
  return prefix;
}

/**
 * The published name of one of this server's tools: `toolName("write")` → `file_write`. Naming a
 * tool the server does not have is a programming error, caught by the first test that reaches it.
 */
export function toolName(name: string): string {
  if (!naming) throw new Error(`toolName("${name}") called before the server registered its tools`);
  if (!naming.known.has(name)) throw new Error(`toolName("${name}"): this server has no tool '${name}' (it has ${[...naming.known].join(", ")})`);
  return joinToolName(naming.prefix, name);
}

/**
 * The name a model calls for one of this process's tools: its published name in a child server;
 * in the hub, which configures no prefix and names its own tools as published, the name itself.
 */
export function calledName(name: string): string {
  return naming ? toolName(name) : name;
}

/** A text that may name sibling tools: a plain string, or a function called once names are known. */
export type Text = string | (() => string);

export function resolveText(text: Text): string;
export function resolveText(text: Text | undefined): string | undefined;
export function resolveText(text: Text | undefined): string | undefined {
  return typeof text === "function" ? text() : text;
}

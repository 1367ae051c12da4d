// The instructions a session's server gives the model: one sentence from the hub, then each
// selected server's own instructions under its prefix. The hub names no server itself: what a
// server is for is the server's to say (read when it connects, or from the build-time manifest).
import type { SessionView } from "./selection.js";

/** What the hub says of itself, whatever servers it runs. */
export const HUB_INSTRUCTIONS =
  "agentbox serves the tools of several MCP servers through this one connection. " +
  "Each tool's name begins with the prefix of the server that provides it, and all of them share one workspace folder.";

export interface InstructedServer {
  name: string;
  prefix: string;
  instructions?: string;
}

/** The servers this session's selection reaches: allowed, and at least one of their tools selected (if they have any). */
export function selectedServers<S extends InstructedServer & { tools: readonly unknown[] }>(servers: readonly S[], view: SessionView): S[] {
  const withSelectedTools = new Set(view.selectedTools().map((t) => view.serverOf(t.name)));
  return servers.filter((s) => view.allowsServer(s.name) && (s.tools.length === 0 || withSelectedTools.has(s.name)));
}

/** `hub` first, then one paragraph per server that has something to say, labelled by its tools' prefix. */
export function mergeInstructions(hub: string, servers: readonly InstructedServer[]): string {
  const parts = servers
    .filter((s) => s.instructions?.trim())
    .map((s) => `${s.prefix ? `${s.prefix}_*` : `${s.name} (unprefixed tools)`}: ${s.instructions!.trim()}`);
  return [hub, ...parts].join("\n\n");
}

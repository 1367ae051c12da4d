// What each server offers (tools, prompts, templates, capabilities), recorded at build time so the
// hub can list a server's tools without running it and start it on its first call. An idle set
// of servers then costs nothing but the hub, and the hub is ready as soon as it listens.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Prompt, ResourceTemplate, ServerCapabilities, Tool } from "@modelcontextprotocol/sdk/types.js";
import { TOOL_PREFIX_ENV } from "../../servers/lib/names.js";
import { listOffers } from "./transport.js";
import { builtinServers, configuredServers, distRoot, type ServerConfig } from "../config/config.js";

export interface ManifestEntry {
  capabilities: ServerCapabilities;
  tools: Tool[];
  prompts: Prompt[];
  resourceTemplates: ResourceTemplate[];
  /** The server's own instructions, merged into each session's (hub/catalog/instructions.ts). */
  instructions?: string;
}

type Manifest = Record<string, ManifestEntry>;

/** What a server offers as last listed: what a new instance of it is listed with until it runs. */
export function offersOf(server: Pick<ManifestEntry, keyof ManifestEntry>): ManifestEntry {
  const { capabilities, tools, prompts, resourceTemplates, instructions } = server;
  return { capabilities, tools, prompts, resourceTemplates, instructions };
}

/**
 * The same command line (and environment) under the same prefix is the same server: that is the
 * manifest's key. The prefix counts because a server's texts name its tools by their published names.
 */
export function manifestKey(config: ServerConfig, name: string): string | undefined {
  if (!config.command) return undefined;
  const command = path.basename(config.command) === path.basename(process.execPath) ? "node" : config.command;
  const args = (config.args ?? []).map((a) => (path.isAbsolute(a) ? path.relative(distRoot(), a) : a));
  return JSON.stringify({ command, args, env: config.env ?? {}, cwd: config.cwd ?? null, prefix: config.prefix ?? name });
}

export function manifestPath(): string {
  return process.env.AGENTBOX_MANIFEST || path.join(distRoot(), "manifest.json");
}

export function readManifest(file = manifestPath()): Manifest {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as Manifest;
  } catch {
    return {};
  }
}

async function describeServer(config: ServerConfig, name: string): Promise<ManifestEntry> {
  const client = new Client({ name: "agentbox-manifest", version: "1" });
  await client.connect(
    new StdioClientTransport({
      command: config.command!,
      args: config.args,
      env: { ...(process.env as Record<string, string>), ...config.env, [TOOL_PREFIX_ENV]: config.prefix ?? name },
      cwd: config.cwd,
      stderr: "ignore",
    }),
  );
  try {
    // listed as the hub lists a running child, so an idle one offers exactly the same
    return { capabilities: client.getServerCapabilities() ?? {}, instructions: client.getInstructions(), ...(await listOffers(client)) };
  } finally {
    await client.close();
  }
}

/** Record every server of a config (by default the built-in ones) into a manifest file. */
export async function writeManifest(servers: Record<string, ServerConfig> = builtinServers(), file = manifestPath()): Promise<void> {
  const manifest: Manifest = {};
  await Promise.all(
    Object.entries(servers).map(async ([name, config]) => {
      const key = manifestKey(config, name);
      if (key) manifest[key] = await describeServer(config, name);
    }),
  );
  fs.writeFileSync(file, JSON.stringify(manifest));
}

// `node dist/hub/children/manifest.js [config.json]`: run by `npm run build`
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const configFile = process.argv[2];
  // the config's relative paths are resolved as the hub resolves them, so the keys match
  const listed = configFile ? JSON.parse(fs.readFileSync(configFile, "utf8")).mcpServers : undefined;
  const servers = listed ? configuredServers(listed, configFile) : undefined;
  const workspace = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "agentbox-manifest-"));
  process.env.AGENTBOX_WORKSPACE = workspace;
  writeManifest(servers)
    .then(() => process.stdout.write(`server manifest written to ${manifestPath()}\n`))
    .catch((err) => {
      process.stderr.write(`agentbox: could not record the servers' tools: ${(err as Error).message}\n`);
      process.exitCode = 1;
    })
    .finally(() => fs.rmSync(workspace, { recursive: true, force: true }));
}

// Start the file server for a test file and name its tools as the client sees them.
import fs from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { call, startHub, tempDir, type TestHub } from "../helpers/hub.js";
import { connectChild } from "../helpers/child.js";

// TEMPORARY while the hub is being written: talk to the child directly.
const DIRECT = !fs.existsSync(path.resolve("dist/hub/main.js"));

export interface FileHarness {
  hub: TestHub;
  workspace: string;
  client: Client;
  /** Call a file tool by its unprefixed name. */
  tool(name: string, args?: Record<string, unknown>, client?: Client): Promise<CallToolResult>;
  /** Write a fixture straight to disk (not through the tools). */
  put(rel: string, content: string | Buffer, mode?: number): string;
  stop(): Promise<void>;
}

export async function startFiles(env: Record<string, string> = {}): Promise<FileHarness> {
  const workspace = tempDir("agentbox-file-ws-");
  if (DIRECT) {
    const client = await connectChild("file", { AGENTBOX_WORKSPACE: workspace, ...env });
    const extra: Client[] = [];
    return {
      hub: { connect: async () => { const c = await connectChild("file", { AGENTBOX_WORKSPACE: workspace, ...env }); extra.push(c); return c; } } as unknown as TestHub,
      workspace,
      client,
      tool: (name, args = {}, c = client) => call(c, name, args),
      put(rel, content, mode) {
        const p = path.join(workspace, rel);
        fs.mkdirSync(path.dirname(p), { recursive: true });
        fs.writeFileSync(p, content);
        if (mode !== undefined) fs.chmodSync(p, mode);
        return p;
      },
      async stop() {
        await client.close();
        for (const c of extra) await c.close();
        fs.rmSync(workspace, { recursive: true, force: true });
      },
    };
  }
  const hub = await startHub({ servers: ["file"], workspace, env });
  const client = await hub.connect();
  return {
    hub,
    workspace,
    client,
    tool: (name, args = {}, c = client) => call(c, `file_${name}`, args),
    put(rel, content, mode) {
      const p = path.join(workspace, rel);
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, content);
      if (mode !== undefined) fs.chmodSync(p, mode);
      return p;
    },
    async stop() {
      await hub.stop();
      fs.rmSync(workspace, { recursive: true, force: true });
    },
  };
}

export function structured<T = Record<string, any>>(result: CallToolResult): T {
  return result.structuredContent as T;
}

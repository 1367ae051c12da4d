// Start a hub running the file server for a test file, and call file tools by their own names.
import fs from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { call, startHub, tempDir, type TestHub } from "../helpers/hub.js";

export interface FileHarness {
  hub: TestHub;
  workspace: string;
  client: Client;
  /** Call a file tool by its unprefixed name (published by the hub as file_<name>). */
  tool(name: string, args?: Record<string, unknown>, client?: Client): Promise<CallToolResult>;
  /** Write a fixture straight to disk (not through the tools). */
  put(rel: string, content: string | Buffer, mode?: number): string;
  stop(): Promise<void>;
}

export async function startFiles(env: Record<string, string> = {}): Promise<FileHarness> {
  const workspace = tempDir("agentbox-file-ws-");
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
      hub.handToTenant(p);
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

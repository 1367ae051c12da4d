// Shared bits of the code server tests: a hub running the code server with its own data dir,
// and a short way to run a cell.
import fs from "node:fs";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { call, startHub, tempDir, textOf, type TestHub } from "../helpers/hub.js";

export { call, textOf };

export interface CodeHub extends TestHub {
  dataDir: string;
}

export async function startCodeHub(servers: string[] = ["code"], env: Record<string, string> = {}): Promise<CodeHub> {
  const dataDir = tempDir("agentbox-code-data-");
  // a short grace keeps the kill-and-restart tests quick; behaviour is the same
  const hub = await startHub({ servers, env: { AGENTBOX_CODE_DATA_DIR: dataDir, AGENTBOX_CODE_INTERRUPT_GRACE_MS: "700", ...env } });
  // the code server runs as the workspace's tenant: its data folder is the tenant's
  const owner = fs.statSync(hub.workspace);
  fs.chownSync(dataDir, owner.uid, owner.gid);
  const stop = hub.stop.bind(hub);
  return Object.assign(hub, {
    dataDir,
    async stop() {
      await stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  });
}

/** A code hub and one client connected to it, for a suite's before(). */
export async function openCodeHub(servers?: string[], env?: Record<string, string>): Promise<{ hub: CodeHub; client: Client }> {
  const hub = await startCodeHub(servers, env);
  return { hub, client: await hub.connect() };
}

export interface Structured {
  status: string;
  stdout: string;
  stderr: string;
  result: string | null;
  error: string | null;
  images: number;
  stateKept: boolean;
  truncated: boolean;
  note?: string;
  session: string;
}

export async function run(
  client: Client,
  language: "python" | "javascript",
  code: string,
  extra: Record<string, unknown> = {},
): Promise<{ result: CallToolResult; text: string; data: Structured }> {
  const result = await call(client, "code_execute", { language, code, ...extra });
  return { result, text: textOf(result), data: result.structuredContent as unknown as Structured };
}

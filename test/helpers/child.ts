// Connect an SDK client straight to one child server over stdio, without the hub: for
// developing a server before exercising it through the hub.
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { distRoot } from "../../hub/config.js";

export async function connectChild(name: string, env: Record<string, string> = {}): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(distRoot(), "servers", name, "main.js")],
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: "inherit",
  });
  const client = new Client({ name: "agentbox-child-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

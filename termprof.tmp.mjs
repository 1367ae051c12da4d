import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
const t = new StdioClientTransport({ command: process.execPath, args: process.argv.slice(2), env: { ...process.env, AGENTBOX_WORKSPACE: "/tmp/ws" }, stderr: "ignore" });
const c = new Client({ name: "p", version: "1" }); await c.connect(t);
for (const [name, args] of [["exec", { command: "true" }]]) {
  for (let i = 0; i < 30; i++) await c.callTool({ name, arguments: args });
  const t0 = performance.now(); for (let i = 0; i < 200; i++) await c.callTool({ name, arguments: args });
  console.log(name, ((performance.now() - t0) / 200).toFixed(3), "ms");
}
await c.close();

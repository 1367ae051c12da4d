// `agentbox --stdio`: the same aggregated catalog for a client that launches the hub itself.
import { LineStdioServerTransport } from "../servers/lib/stdio-transport.js";
import type { SessionServices } from "./sessions/services.js";
import { connectSessionServer } from "./sessions/server.js";

export async function serveStdio(hub: SessionServices): Promise<void> {
  // the desktop user who launched the hub is its (first) tenant
  const session = hub.newSession(`stdio-${process.pid}`, "stdio", hub.tenants[0], "stdio");
  await connectSessionServer(hub, session, new LineStdioServerTransport());
}

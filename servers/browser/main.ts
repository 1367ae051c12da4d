// The browser child server: one shared Chromium, one BrowserContext per client session.
import { serve } from "../lib/serve.js";
import { initRuntime, shutdownRuntime } from "./runtime.js";
import content from "./tools/content.js";
import interaction from "./tools/interaction.js";
import navigation from "./tools/navigation.js";
import session from "./tools/session.js";
import record from "./tools/record.js";
import { toolName } from "../lib/names.js";
import { workspaceRoot } from "../lib/workspace.js";
import { createLogger } from "../lib/log.js";
import { browserLive } from "./live.js";

await serve({
  name: "browser",
  sessionState: true,
  instructions: () =>
    `A headless Chromium. ${toolName("navigate")} to a page, read it with ${toolName("snapshot")} (elements carry [ref=eN]), act with ` +
    `${toolName("click")}/${toolName("type")}/${toolName("fill")}/... using a ref from the latest snapshot or a selector; each action returns a fresh snapshot.`,
  tools: [...navigation, ...interaction, ...content, ...session, ...record],
  setup: (_server, { workspace, log }) => void initRuntime(workspace, log),
  live: browserLive(workspaceRoot, createLogger({ server: "browser", part: "live" })),
  onShutdown: shutdownRuntime,
});

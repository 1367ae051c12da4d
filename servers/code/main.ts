// The code server: stateful Python and JavaScript sessions, published by the hub as code_*.
import { serve } from "../lib/serve.js";
import { toolName } from "../lib/names.js";
import { createLogger } from "../lib/log.js";
import { loadConfig } from "./config.js";
import { CodeSessions } from "./sessions.js";
import { executeTool } from "./tools/execute.js";
import { installTool } from "./tools/install.js";
import { resetTool } from "./tools/reset.js";
import { sessionsTool } from "./tools/sessions.js";

const config = loadConfig();
const sessions = new CodeSessions(config, createLogger({ server: "code" }));

await serve({
  name: "code",
  instructions: () =>
    `Run Python and JavaScript in persistent notebook-like sessions (${toolName("execute")}); code can call the other tools of this hub ` +
    "through `tools` (Python: from agentbox import tools).",
  tools: [executeTool(sessions, config), resetTool(sessions), sessionsTool(sessions), installTool(config)],
  onShutdown: () => sessions.closeAll(),
});

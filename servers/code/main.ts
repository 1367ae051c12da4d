// The code server: stateful Python and JavaScript sessions, published by the hub as code_*.
import { serve } from "../lib/serve.js";
import { toolName } from "../lib/names.js";
import { sessions } from "./state.js";
import execute from "./tools/execute.js";
import install from "./tools/install.js";
import reset from "./tools/reset.js";
import sessionTools from "./tools/sessions.js";

await serve({
  name: "code",
  sessionState: true,
  sessionCallback: true,
  instructions: () =>
    `Run Python and JavaScript in persistent notebook-like sessions (${toolName("execute")}); code can call the other tools of this hub ` +
    "through `tools` (Python: from agentbox import tools).",
  tools: [...execute, ...reset, ...sessionTools, ...install],
  onShutdown: () => sessions.closeAll(),
});

// The terminal server: `exec` for one-shot commands, session_* for persistent pty terminals.
import { serve } from "../lib/serve.js";
import { toolName } from "../lib/names.js";
import { killAllExecs } from "./exec-runner.js";
import { closeAllTerminals } from "./registry.js";
import { terminalLive } from "./live.js";
import exec from "./tools/exec.js";
import sessions from "./tools/sessions.js";

await serve({
  name: "terminal",
  sessionState: true,
  sessionCallback: true,
  instructions: () =>
    `Use ${toolName("exec")} for one command that finishes on its own; use ${toolName("session_create")} + ` +
    `${toolName("session_send")}/${toolName("session_read")} for ` +
    "interactive programs (REPLs, prompts, top) and long-running processes.",
  tools: [...exec, ...sessions],
  live: terminalLive,
  async onShutdown() {
    await Promise.all([killAllExecs(), closeAllTerminals()]);
  },
});

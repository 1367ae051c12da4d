// The live view as an MCP App (hub/live/app-resource.ts serves it as ui://agentbox/live-view): the
// host hands it the tool call it belongs to (its input and result); it asks hub_live_view, through
// the host, for a view of that call's terminal or of the session's current browser tab, and draws
// it over the view's WebSocket with the page's own client (./client.ts). It holds no key: the host
// makes the call under its own session. `window.liveApp` says what it did, for tests.
import { App, PostMessageTransport } from "@modelcontextprotocol/ext-apps";
import { elementsOf, watch, type LiveState } from "./client.js";

interface AppState {
  phase: "waiting" | "opening" | "watching" | "failed";
  /** What the app asked hub_live_view for. */
  asked?: Record<string, unknown>;
  error: string;
  view?: LiveState;
}

declare global {
  interface Window {
    liveApp: AppState;
  }
}

const appState: AppState = { phase: "waiting", error: "" };
window.liveApp = appState;
const ui = elementsOf(document);
const app = new App({ name: "agentbox live view", version: "1.0.0" }, {}, { autoResize: true });
let input: Record<string, unknown> = {};

function fail(text: string): void {
  appState.phase = "failed";
  appState.error = text;
  ui.status.textContent = text;
}

/** A terminal's id when the call was about one: terminal_session_send names it, terminal_session_create returns it. */
function terminalOf(tool: string | undefined, result: { structuredContent?: Record<string, unknown> }): string | undefined {
  const named = typeof input.id === "string" ? input.id : undefined;
  const made = typeof result.structuredContent?.id === "string" ? result.structuredContent.id : undefined;
  if (tool?.startsWith("terminal_") || (!tool && typeof result.structuredContent?.pid === "number")) return named ?? made;
  return undefined;
}

async function open(result: { isError?: boolean; structuredContent?: Record<string, unknown> }): Promise<void> {
  appState.phase = "opening";
  const tool = app.getHostContext()?.toolInfo?.tool.name;
  const terminal = terminalOf(tool, result);
  if (tool?.startsWith("terminal_") && !terminal) return fail("The call made no terminal to watch.");
  appState.asked = { ...(terminal ? { terminal } : {}), embedded: true };
  ui.status.textContent = "Opening the live view…";
  const reply = await app.callServerTool({ name: "hub_live_view", arguments: appState.asked });
  const view = reply.structuredContent as { url?: unknown } | undefined;
  if (reply.isError || typeof view?.url !== "string") {
    const said = reply.content?.find((c) => c.type === "text");
    return fail(said && "text" in said ? String(said.text) : "hub_live_view gave no view.");
  }
  appState.view = watch(`${view.url.replace(/^http/, "ws")}/socket`, ui).state;
  appState.phase = "watching";
}

app.ontoolinput = (params) => {
  input = params.arguments ?? {};
};
app.ontoolresult = (result) => {
  // one view per tool call: a host may send the result again (a re-render)
  if (appState.phase !== "waiting") return;
  open(result as { isError?: boolean; structuredContent?: Record<string, unknown> }).catch((err: Error) =>
    fail(`The live view could not open: ${err.message}`),
  );
};

app.connect(new PostMessageTransport(window.parent, window.parent)).catch((err: Error) => fail(`No host to talk to: ${err.message}`));

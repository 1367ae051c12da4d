// The live view as an MCP App (extension io.modelcontextprotocol/ui, SEP-1865): one HTML resource,
// ui://agentbox/live-view, that hosts rendering MCP Apps show next to the conversation for the
// browser and terminal tools a person may want to watch. The app (./web/app.ts, bundled into one
// document by ./app-build.ts) asks hub_live_view for a view through the host and draws it over the
// view's WebSocket, so its CSP names the hub's own origin (http(s) and ws(s)) and nothing else.
// Only clients that declare the extension see the resource listed and the tools' `_meta.ui`;
// everyone else gets exactly what they got before. The resource embeds no token, key or secret.
import fs from "node:fs";
import type { ClientCapabilities, Resource, Tool } from "@modelcontextprotocol/sdk/types.js";
import { EXTENSION_ID, RESOURCE_MIME_TYPE, RESOURCE_URI_META_KEY } from "@modelcontextprotocol/ext-apps/server";
import { protocolError } from "../protocol/jsonrpc.js";
import { STATIC_DIR } from "./page.js";

export const LIVE_APP_URI = "ui://agentbox/live-view";
/** Where ./app-build.ts writes the app: one self-contained document. */
export const LIVE_APP_FILE = `${STATIC_DIR}app.html`;

/**
 * The tools whose call a person may want to watch as it happens: the browser's moves and
 * interactions (each acts on the current tab, which the app's view follows) and the terminal's
 * session create and send (the app shows that terminal).
 */
export const WATCHED_TOOLS: ReadonlySet<string> = new Set([
  ...[
    "navigate",
    "back",
    "forward",
    "reload",
    "click",
    "hover",
    "type",
    "fill",
    "select_option",
    "check",
    "uncheck",
    "press_key",
    "scroll",
    "drag",
    "upload_file",
    "handle_dialog",
  ].map((t) => `browser_${t}`),
  "terminal_session_create",
  "terminal_session_send",
]);

/** True when the client declared MCP Apps with its HTML profile (capabilities.extensions). */
export function rendersApps(capabilities: ClientCapabilities | Record<string, unknown> | undefined): boolean {
  const extensions = (capabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions;
  const declared = extensions?.[EXTENSION_ID] as { mimeTypes?: unknown } | undefined;
  return Array.isArray(declared?.mimeTypes) && declared.mimeTypes.includes(RESOURCE_MIME_TYPE);
}

/** The listed tools, the watched ones carrying `_meta.ui.resourceUri` (and the flat key older hosts read); the others untouched. */
export function withAppMeta(tools: Tool[]): Tool[] {
  return tools.map((tool) => {
    if (!WATCHED_TOOLS.has(tool.name)) return tool;
    const meta = tool._meta ?? {};
    const ui = (meta.ui as Record<string, unknown> | undefined) ?? {};
    return { ...tool, _meta: { ...meta, ui: { ...ui, resourceUri: LIVE_APP_URI }, [RESOURCE_URI_META_KEY]: LIVE_APP_URI } };
  });
}

/** What the app may reach: the hub's origin, for its WebSocket (ws/wss) and nothing else; no frames, no other resources. */
function uiMetaFor(hubBase: string) {
  const { protocol, host } = new URL(hubBase);
  const origin = `${protocol}//${host}`;
  const socketOrigin = `${protocol === "https:" ? "wss:" : "ws:"}//${host}`;
  return { ui: { csp: { connectDomains: [origin, socketOrigin] }, prefersBorder: true } };
}

const DESCRIPTION =
  "Shows the browser tab or terminal a tool call worked on, live, and lets the person take control. " +
  "Asks hub_live_view for the view through the host; reaches nothing but the hub.";

/** The resource as resources/list gives it, its CSP for the hub's address as this request reached it. */
export function liveAppListing(hubBase: string): Resource {
  return {
    uri: LIVE_APP_URI,
    name: "agentbox live view",
    title: "Live view",
    description: DESCRIPTION,
    mimeType: RESOURCE_MIME_TYPE,
    _meta: uiMetaFor(hubBase),
  };
}

let html: string | undefined;

/** resources/read of the app: its one document, or a clear error when the hub was not built. */
export function readLiveApp(hubBase: string): { contents: Array<{ uri: string; mimeType: string; text: string; _meta: Record<string, unknown> }> } {
  if (html === undefined) {
    try {
      html = fs.readFileSync(LIVE_APP_FILE, "utf8");
    } catch {
      throw protocolError(-32603, `The live view app is not built (${LIVE_APP_FILE} is missing): run \`npm run build\`.`);
    }
  }
  return { contents: [{ uri: LIVE_APP_URI, mimeType: RESOURCE_MIME_TYPE, text: html, _meta: uiMetaFor(hubBase) }] };
}

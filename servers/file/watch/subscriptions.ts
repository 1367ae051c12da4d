// resources/subscribe and resources/unsubscribe for workspace files and folders: the file server
// declares `resources.subscribe`, and a subscriber hears notifications/resources/updated for its
// URI whenever anything (a tool, a shell, a download) changes that file or, for a folder, anything
// beneath it. The hub names the session in _meta; a session's subscriptions end with it.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ErrorCode, McpError, SubscribeRequestSchema, UnsubscribeRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../../lib/log.js";
import { sessionOf } from "../../lib/serve.js";
import { onSessionClosed } from "../../lib/session-events.js";
import { relativeToWorkspace } from "../../lib/workspace.js";
import { protocolError, resolveResource } from "../resources.js";
import { limitsFromEnv, WorkspaceChanges } from "./changes.js";

const SCHEME = "file:///";

let shared: WorkspaceChanges | undefined;

/** The workspace's listeners and watch (set up with the server; the change-feed tool reads it). */
export function workspaceChanges(): WorkspaceChanges {
  if (!shared) throw new Error("the file server's change watch is not set up");
  return shared;
}

/** The workspace-relative path ("" for the root) a file: URI names, through the tools' path guard; a missing file may be subscribed to. */
function subscribedPath(workspace: string, uri: string): string {
  if (!uri.startsWith(SCHEME)) throw new McpError(ErrorCode.InvalidParams, `'${uri.slice(0, 200)}' is not a workspace file URI (file:///<path>).`);
  const rest = uri.slice(SCHEME.length);
  if (rest === "") return "";
  const relative = relativeToWorkspace(workspace, resolveResource(workspace, rest, { allowMissing: true }));
  return relative === "." ? "" : relative.split("\\").join("/");
}

export function registerSubscriptions(server: McpServer, env: { workspace: string; log: Logger }): void {
  const changes = new WorkspaceChanges(
    env.workspace,
    limitsFromEnv(),
    (uri) => void server.server.sendResourceUpdated({ uri }).catch(() => undefined),
    env.log.child({ room: "watch" }),
  );
  shared = changes;
  server.server.registerCapabilities({ resources: { subscribe: true } });
  server.server.setRequestHandler(SubscribeRequestSchema, async (request, extra) => {
    const relative = subscribedPath(env.workspace, request.params.uri);
    await changes.subscribe(sessionOf(extra._meta), request.params.uri, relative).catch(protocolError);
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, async (request, extra) => {
    await changes.unsubscribe(sessionOf(extra._meta), request.params.uri);
    return {};
  });
  onSessionClosed((session) => changes.sessionClosed(session));
}

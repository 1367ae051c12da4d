// The file server: confined workspace file tools, snapshots, and workspace files as resources.
import { serve } from "../lib/serve.js";
import { isReadOnly } from "./paths.js";
import { registerResources } from "./resources.js";
import browse from "./tools/browse.js";
import changes from "./tools/changes.js";
import edit from "./tools/edit.js";
import manage from "./tools/manage.js";
import read from "./tools/read.js";
import search from "./tools/search.js";
import snapshot from "./tools/snapshot.js";
import write from "./tools/write.js";
import { registerSubscriptions, workspaceChanges } from "./watch/subscriptions.js";

await serve({
  name: "file",
  instructions:
    "Files in the shared agentbox workspace. Paths are relative to the workspace; nothing outside it is reachable." +
    (isReadOnly() ? " This server is read-only: tools that modify files are refused." : ""),
  tools: [...read, ...write, ...edit, ...browse, ...search, ...manage, ...snapshot, ...changes],
  setup(server, env) {
    registerResources(server, env);
    registerSubscriptions(server, env);
  },
  onShutdown: () => workspaceChanges().stop(),
});

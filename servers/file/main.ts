// The file server: confined workspace file tools, snapshots, and workspace files as resources.
import { serve } from "../lib/serve.js";
import { isReadOnly } from "./paths.js";
import { registerResources } from "./resources.js";
import { list, tree } from "./tools/browse.js";
import { edit } from "./tools/edit.js";
import { copy, info, mkdir, move, remove } from "./tools/manage.js";
import { read, readMany } from "./tools/read.js";
import { find, grep } from "./tools/search.js";
import { snapshotDelete, snapshotList, snapshotRestore, snapshotTake } from "./tools/snapshot.js";
import { write } from "./tools/write.js";

await serve({
  name: "file",
  instructions:
    "Files in the shared agentbox workspace. Paths are relative to the workspace; nothing outside it is reachable." +
    (isReadOnly() ? " This server is read-only: tools that modify files are refused." : ""),
  tools: [read, readMany, write, edit, list, tree, find, grep, move, copy, remove, mkdir, info, snapshotTake, snapshotList, snapshotRestore, snapshotDelete],
  setup: registerResources,
});

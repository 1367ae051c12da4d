// snapshot_take, snapshot_list, snapshot_restore, snapshot_delete: whole-workspace checkpoints.
import { z } from "zod";
import { toolName } from "../../lib/names.js";
import { defineTool, reply } from "../../lib/tool.js";
import { formatSize } from "../content.js";
import { assertWritable } from "../paths.js";
import { deleteSnapshot, listSnapshots, restoreSnapshot, serialized, takeSnapshot, type SnapshotMeta } from "../snapshots.js";

const nameParam = z.string().min(1).describe("e.g. 'before-refactor'");

const metaShape = {
  name: z.string(),
  createdAt: z.string(),
  files: z.number(),
  directories: z.number(),
  symlinks: z.number(),
  bytes: z.number(),
  skipped: z.array(z.string()).describe("Entries not copied: special files (sockets, FIFOs, devices) and hard-linked files."),
};

function describe(m: SnapshotMeta): string {
  return `${m.name}  ${m.createdAt}  ${m.files} files, ${m.directories} folders, ${m.symlinks} symlinks, ${formatSize(m.bytes)}`;
}

function metaOut(m: SnapshotMeta) {
  const { name, createdAt, files, directories, symlinks, bytes, skipped } = m;
  return { name, createdAt, files, directories, symlinks, bytes, skipped };
}

const snapshotTake = defineTool({
  name: "snapshot_take",
  title: "Take a workspace snapshot",
  description: () =>
    `Save the whole workspace (files, empty folders, modes, symlinks) under a name, to bring it back later with ${toolName("snapshot_restore")}.`,
  input: { name: nameParam, overwrite: z.boolean().default(false).describe("Replace one of that name") },
  output: metaShape,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run({ name, overwrite }, ctx) {
    assertWritable("snapshot_take");
    const meta = await serialized(() => takeSnapshot(ctx.workspace, name, overwrite));
    const skipped = meta.skipped.length ? `\nNot copied (special files, hard links): ${meta.skipped.join(", ")}` : "";
    return reply.data(`Snapshot taken: ${describe(meta)}${skipped}`, metaOut(meta));
  },
});

const snapshotList = defineTool({
  name: "snapshot_list",
  title: "List workspace snapshots",
  description: "List the workspace snapshots, oldest first.",
  input: {},
  output: { snapshots: z.array(z.object(metaShape)) },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(_args, ctx) {
    const metas = await listSnapshots(ctx.workspace);
    const text = metas.length ? metas.map(describe).join("\n") : `No snapshots yet; take one with ${toolName("snapshot_take")}.`;
    return reply.data(text, { snapshots: metas.map(metaOut) });
  },
});

const snapshotRestore = defineTool({
  name: "snapshot_restore",
  title: "Restore a workspace snapshot",
  description: "Bring the workspace back exactly to a snapshot: changed and deleted files are restored, files created since are removed.",
  input: { name: nameParam },
  output: metaShape,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run({ name }, ctx) {
    assertWritable("snapshot_restore");
    const meta = await serialized(() => restoreSnapshot(ctx.workspace, name));
    return reply.data(`Workspace restored to snapshot ${describe(meta)}`, metaOut(meta));
  },
});

const snapshotDelete = defineTool({
  name: "snapshot_delete",
  title: "Delete a workspace snapshot",
  description: "Delete a snapshot (the workspace itself is not touched).",
  input: { name: nameParam },
  output: metaShape,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run({ name }, ctx) {
    assertWritable("snapshot_delete");
    const meta = await serialized(() => deleteSnapshot(ctx.workspace, name));
    return reply.data(`Deleted snapshot ${meta.name}.`, metaOut(meta));
  },
});

export default [snapshotTake, snapshotList, snapshotRestore, snapshotDelete];

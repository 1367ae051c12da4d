// edit: exact-text replacements with an expected count, applied all-or-nothing and atomically.
import { createTwoFilesPatch } from "diff";
import { z } from "zod";
import { toolName } from "../../lib/names.js";
import { defineTool, reply, ToolError } from "../../lib/tool.js";
import { atomicWriteAt } from "../../lib/atomic-write.js";
import { formatSize, kindOf, readAt } from "../content.js";
import { assertWritable, rel, withOpened, withParent } from "../paths.js";
import { applyReplacements } from "../replace.js";

const MAX_EDIT_BYTES = 10 * 1024 * 1024;

const edit = defineTool({
  name: "edit",
  title: "Edit a file",
  description:
    "Replace exact text in a text file. Each oldText must match expectedCount times; if it matches nowhere, a " +
    "whitespace-insensitive match is tried. Edits apply in order, all or none. Returns a unified diff.",
  input: {
    path: z.string(),
    edits: z
      .array(
        z.object({
          oldText: z.string().describe("Exact text to find (enough context to be unique)"),
          newText: z.string(),
          expectedCount: z.number().int().min(1).default(1).describe("Matches to replace; another count is refused"),
        }),
      )
      .min(1),
    dryRun: z.boolean().default(false).describe("Diff only, write nothing"),
  },
  output: {
    path: z.string(),
    dryRun: z.boolean(),
    changed: z.boolean(),
    diff: z.string().describe("Unified diff of the change."),
    applied: z.array(z.object({ mode: z.enum(["exact", "whitespace"]), replacements: z.number(), lines: z.array(z.number()) })),
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  async run({ path: userPath, edits, dryRun }, ctx) {
    if (!dryRun) assertWritable("edit");
    // read through the verified descriptor, write by name inside the folder opened from the root
    const { file, before } = await withOpened(ctx, userPath, async ({ handle, stat, real }) => {
      if (!stat.isFile()) throw new ToolError(`'${userPath}' is not a regular file.`);
      if (stat.size > MAX_EDIT_BYTES) throw new ToolError(`'${userPath}' is ${formatSize(stat.size)}, over the ${formatSize(MAX_EDIT_BYTES)} edit limit.`);
      const bytes = await readAt(handle, stat.size);
      if ((await kindOf(real, bytes)) !== "text") throw new ToolError(`'${userPath}' is not a text file; ${toolName("edit")} works on UTF-8 text only.`);
      return { file: real, before: bytes.toString("utf8") };
    }).catch((err: unknown) => {
      // a model asked to edit a file that is not there most often meant to create it
      if (err instanceof ToolError && /^No such file/.test(err.message))
        throw new ToolError(`No such file: ${userPath}. Use ${toolName("write")} to create it.`);
      throw err;
    });
    const { text: after, applied } = applyReplacements(before, edits);
    const shown = rel(ctx, file);
    const diff = createTwoFilesPatch(`a/${shown}`, `b/${shown}`, before, after);
    const changed = before !== after;
    if (!dryRun && changed) await withParent(ctx, file, {}, (dir, name) => atomicWriteAt(dir, name, Buffer.from(after, "utf8")));
    const total = applied.reduce((s, a) => s + a.replacements, 0);
    const head = dryRun
      ? `Dry run: ${total} replacement(s) would change ${shown}.`
      : changed
        ? `Edited ${shown}: ${total} replacement(s).`
        : `No change to ${shown}: the replacements equal the original text.`;
    const loose = applied.some((a) => a.mode === "whitespace") ? " (some matched only with whitespace differences ignored)" : "";
    return reply.data(`${head}${loose}\n\n${diff}`, { path: shown, dryRun, changed, diff, applied });
  },
});

export default [edit];

// code_execute: run Python or JavaScript in a persistent session, notebook style.
import { z } from "zod";
import { defineTool, reply } from "../../lib/tool.js";
import { portNote } from "../../lib/tenant-ports.js";
import { memoryReliefNote } from "../../lib/memory-relief.js";
import type { ExecOutcome } from "../kernel.js";
import { DEFAULT_SESSION } from "../sessions.js";
import { config, sessions } from "../state.js";

export const languageSchema = z.enum(["python", "javascript"]);
export const sessionNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,64}$/, "a session name uses letters, digits, '_', '.' and '-' (at most 64)")
  .optional()
  .describe(`Named session with its own state (default '${DEFAULT_SESSION}', one per language)`);

const output = {
  status: z.enum(["ok", "error", "timeout", "cancelled", "crashed"]),
  stdout: z.string(),
  stderr: z.string(),
  result: z.string().nullable().describe("repr / inspect of the last expression, if the code ended with one"),
  error: z.string().nullable().describe("the exception with its traceback trimmed to the user's code"),
  images: z.number().int().describe("number of figures returned as image content"),
  stateKept: z.boolean().describe("false when the interpreter had to be restarted and earlier state is gone"),
  outputCut: z.boolean().describe("true when stdout, stderr or the result went over the output cap and part was left out (gone, not paged)"),
  note: z.string().optional(),
  language: z.enum(["python", "javascript"]),
  session: z.string(),
  cell: z.number().int(),
  durationMs: z.number().int(),
};

/** One text block with labelled parts; a bare value (`2**10` → `1024`) stays bare. */
export function formatOutcome(outcome: ExecOutcome): string {
  const parts: Array<[string, string]> = [];
  // a failed cell's status is told in the text too: the model may read the text alone
  if (outcome.status !== "ok") {
    parts.push(["status", `${outcome.status}; ${outcome.stateKept ? "the session's state was kept" : "the session's earlier state is gone"}`]);
  }
  if (outcome.stdout) parts.push(["stdout", outcome.stdout]);
  if (outcome.stderr) parts.push(["stderr", outcome.stderr]);
  if (outcome.error) parts.push(["error", outcome.error]);
  if (outcome.value !== null) parts.push(["result", outcome.value]);
  if (outcome.images.length) parts.push(["figures", `${outcome.images.length} figure(s) returned as PNG images`]);
  if (outcome.note) parts.push(["note", outcome.note]);
  if (parts.length === 1 && parts[0][0] === "result") return parts[0][1];
  if (parts.length === 0) return "(no output)";
  return parts.map(([label, text]) => `[${label}]\n${text.replace(/\n$/, "")}`).join("\n");
}

const execute = defineTool({
  name: "execute",
  // a call may run long: a client of the tasks extension gets a task it can poll, not a request held open
  taskSupport: "optional",
  title: "Run code",
  description:
    "Run Python or JavaScript like a notebook cell: state persists between calls; cwd is the workspace. Returns stdout, " +
    "stderr, the last value, tracebacks, matplotlib figures as PNG; JavaScript allows top-level await. " +
    "Code can call this hub's tools: Python `from agentbox import tools; tools.file_read(path=...)`, JavaScript " +
    "`await tools.file_read({ path })`. A timeout or cancel interrupts it; the reply says if state survived.",
  input: {
    language: languageSchema,
    code: z.string().min(1),
    session: sessionNameSchema,
    timeoutMs: z.number().int().min(100).max(config.maxTimeoutMs).optional().describe(`Interrupt it after this many ms (default ${config.defaultTimeoutMs})`),
  },
  output,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  async run({ language, code, session, timeoutMs }, ctx) {
    const name = session ?? DEFAULT_SESSION;
    const started = Date.now();
    // a heartbeat for callers that asked for progress (the hub resets its timeout on progress)
    const heartbeat = setInterval(() => void ctx.progress(Math.round((Date.now() - started) / 1000), undefined, "running"), 15_000);
    const outcome = await sessions
      .withKernel(ctx.session, language, name, ctx.workspace, ctx.sessionToken, (kernel) =>
        kernel.execute(code, timeoutMs ?? config.defaultTimeoutMs, ctx.signal),
      )
      .finally(() => clearInterval(heartbeat));
    const ports = outcome.status === "error" ? portNote(`${outcome.error ?? ""}\n${outcome.stderr}`) : undefined;
    const memory = outcome.status === "ok" ? undefined : memoryReliefNote(started);
    const note = [outcome.note, memory, ports].filter(Boolean).join(" ") || undefined;
    const structured = {
      status: outcome.status,
      stdout: outcome.stdout,
      stderr: outcome.stderr,
      result: outcome.value,
      error: outcome.error,
      images: outcome.images.length,
      stateKept: outcome.stateKept,
      outputCut: outcome.truncated,
      ...(note ? { note } : {}),
      language,
      session: name,
      cell: outcome.cell,
      durationMs: Date.now() - started,
    };
    const text = formatOutcome({ ...outcome, note });
    const figures = outcome.images.map((image) => ({ type: "image" as const, data: image.data, mimeType: image.mimeType }));
    return outcome.status === "ok" ? reply.data(text, structured, figures) : reply.failure(text, structured, figures);
  },
});

export default [execute];

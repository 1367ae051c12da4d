// exec: one command line through bash, output captured per stream, the whole tree killed on
// timeout or cancellation.
import { z } from "zod";
import { defineTool, reply, ToolError } from "../../lib/tool.js";
import { errorMessage } from "../../lib/log.js";
import { toolName } from "../../lib/names.js";
import { fileSizeLimitNote } from "../../lib/disk-budget.js";
import { memoryReliefNote } from "../../lib/memory-relief.js";
import { portNote } from "../../lib/tenant-ports.js";
import { runCommand, type ExecResult } from "../exec-runner.js";
import { ProgressStream } from "../progress.js";
import { settings } from "../settings.js";
import { envSchema, resolveCwd } from "./common.js";

const MAX_TIMEOUT_MS = 60 * 60_000;

const exec = defineTool({
  name: "exec",
  // a call may run long: a client of the tasks extension gets a task it can poll, not a request held open
  taskSupport: "optional",
  title: "Run a command",
  description: () =>
    "Run a command line with bash -c; returns exit code, stdout, stderr, duration. Its process tree is killed on timeout or cancel, " +
    `background processes when it exits: use ${toolName("session_create")} for long-running or interactive programs. ` +
    "Long output keeps its tail; new output streams as progress.",
  input: {
    command: z.string().min(1),
    cwd: z.string().optional().describe("Working directory (default: workspace root)"),
    env: envSchema.optional(),
    stdin: z.string().optional().describe("Standard input (default: closed)"),
    timeoutMs: z.number().int().positive().max(MAX_TIMEOUT_MS).default(120_000).describe("Kill it and all it started after this many ms"),
  },
  output: {
    exitCode: z.number().int().nullable().describe("Exit code, null when killed by a signal."),
    signal: z.string().nullable().describe("The signal that ended the command, if any."),
    stdout: z.string(),
    stderr: z.string(),
    durationMs: z.number(),
    outputCut: z.boolean().describe("True when the output cap dropped the beginning of stdout or stderr (droppedBytes: how much; it is gone, not paged)."),
    droppedBytes: z.object({ stdout: z.number(), stderr: z.number() }),
    timedOut: z.boolean(),
    cancelled: z.boolean(),
    killedProcesses: z.number().describe("Processes killed at the end (the tree on timeout/cancel, or background leftovers)."),
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  async run({ command, cwd, env, stdin, timeoutMs }, ctx) {
    const dir = resolveCwd(ctx.workspace, cwd);
    const startedAt = Date.now();
    const stream = new ProgressStream(ctx);
    let result: ExecResult;
    try {
      result = await runCommand({
        command,
        cwd: dir,
        env,
        sessionToken: ctx.sessionToken,
        stdin,
        timeoutMs,
        maxOutput: settings.maxOutput,
        signal: ctx.signal,
        onOutput: (_stream, text) => stream.push(text),
      });
    } catch (err) {
      throw new ToolError(`Could not start bash: ${errorMessage(err)}`);
    } finally {
      await stream.close();
    }
    const outputCut = result.droppedBytes.stdout > 0 || result.droppedBytes.stderr > 0;
    const structured = { ...result, outputCut };
    const notes = [await fileSizeLimitNote(result), memoryReliefNote(startedAt), portNote(`${result.stdout}\n${result.stderr}`)].filter(Boolean);
    const note = notes.length ? notes.join(" ") : undefined;
    const text = describe(result, timeoutMs, outputCut, note);
    const failed = result.timedOut || result.cancelled || result.exitCode !== 0;
    // a non-zero exit is an error (docs/tools.md, "Failures keep their data"), with the exit code and output as data all the same
    return failed ? reply.failure(text, structured) : reply.data(text, structured);
  },
});

function describe(r: ExecResult, timeoutMs: number, outputCut: boolean, note?: string): string {
  let head: string;
  if (r.timedOut) head = `Timed out after ${timeoutMs} ms: killed the whole process tree (${r.killedProcesses} processes).`;
  else if (r.cancelled) head = `Cancelled: killed the whole process tree (${r.killedProcesses} processes).`;
  else if (r.exitCode === null) head = `Killed by ${r.signal}.`;
  else head = `Exit code ${r.exitCode}.`;
  const lines = [`${head} Took ${r.durationMs} ms.`];
  if (!r.timedOut && !r.cancelled && r.killedProcesses > 0) {
    lines.push(`Killed ${r.killedProcesses} background processes it left running.`);
  }
  if (note) lines.push(note);
  if (outputCut) {
    lines.push(
      `Output truncated to the last ${settings.maxOutput} bytes per stream (dropped: stdout ${r.droppedBytes.stdout}, stderr ${r.droppedBytes.stderr}).`,
    );
  }
  lines.push("--- stdout ---", r.stdout.replace(/\n$/, ""), "--- stderr ---", r.stderr.replace(/\n$/, ""));
  return lines.join("\n");
}

export default [exec];

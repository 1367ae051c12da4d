// The persistent-terminal tools: session_create, session_send, session_read, session_resize,
// session_kill, session_list. Each works only on the calling client session's terminals.
import { z } from "zod";
import { defineTool, reply, ToolError } from "../../lib/tool.js";
import { controlBackText, HELD_RETRY_AFTER_MS, heldByPersonText } from "../../lib/live.js";
import { toolName } from "../../lib/names.js";
import { limitField } from "../../lib/paging.js";
import { portNote } from "../../lib/tenant-ports.js";
import { KEY_HELP, keyBytes } from "../keys.js";
import { defaultShell, resolveProgram } from "../program.js";
import { closeTerminal, findTerminal, listTerminals, openTerminal } from "../registry.js";
import { settings } from "../settings.js";
import type { ReadResult, Terminal, WaitOutcome } from "../terminal.js";
import { envSchema, resolveCwd } from "./common.js";
import { recordedKinds } from "../../lib/recording-names.js";
import { recordingNote, recordingOf, recordTerminal } from "../recording.js";

const MAX_WAIT_MS = 10 * 60_000;

// the id terminal_session_create returned: the tools' titles say whose id it is
const id = z.string().min(1);
const cols = z.number().int().min(10).max(1000);
const rows = z.number().int().min(2).max(500);
const stripAnsi = z.boolean().default(true).describe("Strip ANSI escapes, CRLF to LF; false: raw bytes");
const waitParams = {
  waitFor: z.string().min(1).optional().describe("Wait for this regex (JavaScript, multiline) in new output, e.g. '>>> $'"),
  quietMs: z.number().int().positive().max(60_000).optional().describe("Wait for this many ms of quiet (after waitFor, if both)"),
  timeoutMs: z.number().int().positive().max(MAX_WAIT_MS).default(10_000).describe("Longest wait; then the output so far is returned"),
  stripAnsi,
};

const infoShape = {
  id: z.string(),
  pid: z.number(),
  program: z.string(),
  args: z.array(z.string()),
  cwd: z.string(),
  cols: z.number(),
  rows: z.number(),
  alive: z.boolean(),
  exitCode: z.number().nullable(),
  unreadBytes: z.number(),
  createdAt: z.string(),
  recording: z.string().optional().describe("Its recording's id (hub_recordings lists it), when it is recorded"),
};
const readShape = {
  id: z.string(),
  output: z.string().describe("The output returned by this call."),
  droppedBytes: z.number().describe("Unread output lost because the scrollback cap was exceeded."),
  waited: z.enum(["pattern", "quiet", "exited", "timeout", "cancelled"]).nullable(),
  alive: z.boolean(),
  exitCode: z.number().nullable(),
};

function info(t: Terminal) {
  return {
    id: t.id,
    pid: t.pid,
    program: t.options.program,
    args: t.options.args,
    cwd: t.options.cwd,
    cols: t.cols,
    rows: t.rows,
    alive: t.alive,
    exitCode: t.exit?.exitCode ?? null,
    unreadBytes: t.unread,
    createdAt: t.createdAt.toISOString(),
    ...(recordingOf(t) ? { recording: recordingOf(t) } : {}),
  };
}

function status(t: Terminal): string {
  return t.alive ? "running" : `exited with code ${t.exit!.exitCode}`;
}

function compile(pattern: string | undefined): RegExp | undefined {
  if (pattern === undefined) return undefined;
  try {
    return new RegExp(pattern, "m");
  } catch (err) {
    throw new ToolError(`waitFor is not a valid regular expression: ${(err as Error).message}`);
  }
}

const WAIT_NOTES: Record<WaitOutcome, string> = {
  pattern: "pattern matched",
  quiet: "output went quiet",
  exited: "the program exited",
  timeout: "timed out waiting",
  cancelled: "wait cancelled",
};

/** What session_send and session_read answer; `more` adds fields of the calling tool's own output. */
function readReply(t: Terminal, read: ReadResult, waited: WaitOutcome | null, more: Record<string, unknown> = {}) {
  const notes = [`Terminal ${t.id} (${status(t)})`];
  if (waited) notes.push(WAIT_NOTES[waited]);
  if (read.droppedBytes > 0) notes.push(`${read.droppedBytes} unread bytes were dropped by the scrollback cap`);
  const recorded = recordingNote(t);
  if (recorded) notes.push(recorded);
  const ports = portNote(read.text);
  const text = `${notes.join("; ")}.${ports ? ` ${ports}` : ""}\n${read.text}`;
  return reply.data(text, {
    id: t.id,
    output: read.text,
    droppedBytes: read.droppedBytes,
    waited,
    alive: t.alive,
    exitCode: t.exit?.exitCode ?? null,
    ...more,
  });
}

const sessionCreate = defineTool({
  name: "session_create",
  title: "Open a terminal",
  description: () =>
    "Open a persistent terminal (a pty running a shell or another program, e.g. python3), " +
    `kept until ${toolName("session_kill")}, your client session's end or the idle limit. Returns its id. ` +
    `At most ${settings.maxSessions} running per client session.`,
  input: {
    shell: z.string().min(1).optional().describe("Program to run (default: $SHELL, else /bin/bash)"),
    args: z.array(z.string()).default([]),
    cwd: z.string().optional().describe("Working directory (default: workspace root)"),
    env: envSchema.optional(),
    cols: cols.default(120),
    rows: rows.default(40),
    record: z.boolean().optional().describe("Record it (asciicast; see hub_recordings)"),
  },
  output: infoShape,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  async run({ shell, args, cwd, env, cols, rows, record }, ctx) {
    const program = shell ? resolveProgram(shell) : defaultShell();
    const dir = resolveCwd(ctx.workspace, cwd);
    const t = await openTerminal(ctx.session, { program, args, cwd: dir, env, sessionToken: ctx.sessionToken, cols, rows, scrollback: settings.maxOutput });
    // the operator's setting wins over the agent's false: what is recorded is the operator's call
    if (record || recordedKinds().has("terminal")) await recordTerminal(t, ctx.workspace, ctx.session, ctx.log);
    ctx.log.info("terminal opened", { session: ctx.session, id: t.id, pid: t.pid, program });
    const recording = recordingOf(t) ? `; recorded as ${recordingOf(t)}` : "";
    return reply.data(`Terminal ${t.id} started: ${program} ${args.join(" ")} (pid ${t.pid}, ${cols}x${rows}) in ${dir}${recording}.`, info(t));
  },
});

const sessionSend = defineTool({
  name: "session_send",
  title: "Type into a terminal",
  description:
    "Send text and/or named keys to a terminal. With waitFor or quietMs, wait and return the output since your " +
    "last read (marking it read); otherwise return at once.",
  input: {
    id,
    input: z.string().optional().describe("Text to type; '\\n' presses Enter, e.g. 'ls -la\\n'"),
    keys: z.array(z.string()).optional().describe(`Sent after the text, e.g. ['Ctrl-C']: ${KEY_HELP}`),
    ...waitParams,
  },
  output: { ...readShape, sentBytes: z.number() },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  async run({ id, input, keys, waitFor, quietMs, timeoutMs, stripAnsi }, ctx) {
    if (input === undefined && (keys === undefined || keys.length === 0)) {
      throw new ToolError("Nothing to send: give input text, keys, or both.");
    }
    const pattern = compile(waitFor);
    let data = (input ?? "").replace(/\r?\n/g, "\r");
    for (const key of keys ?? []) {
      const bytes = keyBytes(key);
      if (bytes === undefined) throw new ToolError(`Unknown key '${key}'. Known keys: ${KEY_HELP}; e.g. Ctrl-C (also C-c, ^c).`);
      data += bytes;
    }
    const t = await findTerminal(ctx.session, id);
    if (!t.alive) {
      // what it printed before it ended is the answer the input was for: it comes with the failure
      const last = t.readNew(stripAnsi);
      const data = { id, output: last.text, droppedBytes: last.droppedBytes, waited: null, alive: false, exitCode: t.exit?.exitCode ?? null, sentBytes: 0 };
      const unread = last.text ? ` Its unread output:\n${last.text}` : "";
      throw new ToolError(`Terminal ${id} has ${status(t)}; nothing was sent. Remove it with ${toolName("session_kill")}.${unread}`, data);
    }
    if (t.heldByPerson) {
      const held = { id, output: "", droppedBytes: 0, waited: null, alive: t.alive, exitCode: null, sentBytes: 0 };
      return reply.held(heldByPersonText("terminal"), HELD_RETRY_AFTER_MS, held);
    }
    const back = t.handedBack ? `${controlBackText("terminal")}\n` : "";
    t.handedBack = false;
    const from = t.written;
    t.write(data);
    const sentBytes = Buffer.byteLength(data);
    if (!pattern && !quietMs) {
      const result = { id, output: "", droppedBytes: 0, waited: null, alive: t.alive, exitCode: t.exit?.exitCode ?? null, sentBytes };
      return reply.data(`${back}Sent ${sentBytes} bytes to terminal ${id}; read the response with ${toolName("session_read")}.`, result);
    }
    // the terminal echoes the typed text: match waitFor only against what comes after that echo
    const waited = await t.wait({ from, pattern, echo: input, quietMs, timeoutMs, signal: ctx.signal });
    const result = readReply(t, t.readNew(stripAnsi), waited, { sentBytes });
    return back ? { ...result, content: [{ type: "text" as const, text: back.trim() }, ...result.content] } : result;
  },
});

const sessionRead = defineTool({
  name: "session_read",
  title: "Read a terminal",
  description: "Read a terminal's output (marking it read), optionally after waiting for a pattern or for quiet.",
  input: {
    id,
    mode: z.enum(["new", "tail"]).default("new").describe("'new': output since the last read; 'tail': the last `limit` lines"),
    limit: limitField("lines", 10_000).default(40).describe("Lines for mode 'tail'"),
    ...waitParams,
  },
  output: readShape,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async run({ id, mode, limit, waitFor, quietMs, timeoutMs, stripAnsi }, ctx) {
    const pattern = compile(waitFor);
    const t = await findTerminal(ctx.session, id);
    let waited: WaitOutcome | null = null;
    if (pattern || quietMs) waited = await t.wait({ from: t.readOffset, pattern, quietMs, timeoutMs, signal: ctx.signal });
    const read = mode === "tail" ? t.readTail(limit, stripAnsi) : t.readNew(stripAnsi);
    return readReply(t, read, waited);
  },
});

const sessionResize = defineTool({
  name: "session_resize",
  title: "Resize a terminal",
  description: "Change a terminal's size; full-screen programs (top, vim, less) redraw for the new size.",
  input: { id, cols, rows },
  output: infoShape,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run({ id, cols, rows }, ctx) {
    const t = await findTerminal(ctx.session, id);
    if (!t.alive) throw new ToolError(`Terminal ${id} has ${status(t)}; it cannot be resized.`, info(t));
    t.resize(cols, rows);
    return reply.data(`Terminal ${id} resized to ${cols}x${rows}.`, info(t));
  },
});

const sessionKill = defineTool({
  name: "session_kill",
  title: "Close a terminal",
  description: "Kill a terminal's program and every process started in it, and forget the terminal.",
  input: { id },
  output: { ...infoShape, killedProcesses: z.number() },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run({ id }, ctx) {
    const { terminal: t, killed } = await closeTerminal(ctx.session, id);
    ctx.log.info("terminal killed", { session: ctx.session, id, killed });
    return reply.data(`Terminal ${id} closed (${killed} processes killed).`, { ...info(t), killedProcesses: killed });
  },
});

const sessionList = defineTool({
  name: "session_list",
  title: "List terminals",
  description: "List this client session's terminals: id, program, cwd, size, whether running, unread output.",
  input: {},
  output: { terminals: z.array(z.object(infoShape)) },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(_args, ctx) {
    const terminals = (await listTerminals(ctx.session)).map(info);
    const lines = terminals.map(
      (t) =>
        `${t.id}  ${t.alive ? "running" : `exited(${t.exitCode})`}  ${t.program} ${t.args.join(" ")}  ${t.cols}x${t.rows}  unread ${t.unreadBytes}B  ${t.cwd}`,
    );
    return reply.data(terminals.length ? lines.join("\n") : "No terminals in this client session.", { terminals });
  },
});

export default [sessionCreate, sessionSend, sessionRead, sessionResize, sessionKill, sessionList];

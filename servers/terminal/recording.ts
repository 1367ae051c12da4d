// A terminal recorded as asciicast v2 (the asciinema format): a header line, then one
// `[seconds, "o", text]` line per chunk of output and `[seconds, "r", "COLSxROWS"]` per resize.
// Input is not recorded: what is typed comes back as the terminal's echo when it is meant to be seen,
// and what is not echoed (a password at a prompt) stays out of the file. An early end is marked
// with `[seconds, "m", note]` (a marker, which players show).
import type { Logger } from "../lib/log.js";
import { errorMessage } from "../lib/log.js";
import { startRecording, type Recording } from "../lib/recordings.js";
import type { Terminal } from "./terminal.js";

/** Output a recording holds in memory before its file is open, at most. */
const EARLY_BYTES = 1024 * 1024;

interface TerminalRecording {
  recording?: Recording;
  /** Whether the agent was told the recording stopped early. */
  told: boolean;
}

const recorded = new WeakMap<Terminal, TerminalRecording>();

const line = (event: unknown[]) => `${JSON.stringify(event)}\n`;

/**
 * Record a terminal from now on. Call it right after the terminal is made, before its first output
 * arrives: what comes while the file is being opened is held and written first. Resolves once the
 * file is open, or the failure to open it is logged (a terminal works unrecorded rather than not at all).
 */
export function recordTerminal(t: Terminal, workspace: string, session: string, log: Logger): Promise<void> {
  const started = Date.now();
  const state: TerminalRecording = { told: false };
  recorded.set(t, state);
  const seconds = () => Math.round(Date.now() - started) / 1000;
  let early: string[] | undefined = [];
  let earlyBytes = 0;
  const put = (text: string) => {
    if (state.recording) return state.recording.write(text);
    if (!early || earlyBytes + text.length > EARLY_BYTES) return;
    early.push(text);
    earlyBytes += text.length;
  };
  const unwatch = t.watch({
    output: (data) => put(line([seconds(), "o", data])),
    resize: (cols, rows) => put(line([seconds(), "r", `${cols}x${rows}`])),
    exit: () => void state.recording?.end(),
  });
  const header = {
    version: 2,
    width: t.cols,
    height: t.rows,
    timestamp: Math.floor(started / 1000),
    env: { TERM: t.options.env?.TERM ?? "xterm-256color", SHELL: t.options.program },
    title: `${t.id}: ${[t.options.program, ...t.options.args].join(" ")}`,
  };
  return startRecording(workspace, session, "terminal", "asciicast", (note) => line([seconds(), "m", note])).then(
    (recording) => {
      recording.write(`${JSON.stringify(header)}\n`);
      for (const text of early ?? []) recording.write(text);
      early = undefined;
      state.recording = recording;
      if (!t.alive) void recording.end();
      log.info("terminal recorded", { session, id: t.id, recording: recording.id });
    },
    (err) => {
      early = undefined;
      unwatch();
      log.warn("terminal not recorded", { session, id: t.id, error: errorMessage(err) });
    },
  );
}

/** The id of the terminal's recording, once its file is open. */
export function recordingOf(t: Terminal): string | undefined {
  return recorded.get(t)?.recording?.id;
}

/** Once, after the recording stopped early: the line to add to the next result about this terminal. */
export function recordingNote(t: Terminal): string | undefined {
  const state = recorded.get(t);
  const note = state?.recording?.note;
  if (!state || !note || state.told) return undefined;
  state.told = true;
  return `${note} (recording ${state.recording!.id})`;
}

/** End the terminal's recording, waiting for what is queued to be written. */
export async function endRecording(t: Terminal): Promise<void> {
  await recorded.get(t)?.recording?.end();
}

// What a recording is called, shared by the servers that write recordings (terminal, browser) and
// the hub that lists and serves them: the request that lists a session's recordings, the setting
// that records every session, where the files live in the tenant's workspace and how they are named.
// The hub never takes a path from a server: it builds it from these rules and a checked id.
import { createHash } from "node:crypto";
import path from "node:path";

/** The hub asks a server for a session's recordings: params {session}, result {recordings: RecordingEntry[]}. */
export const RECORDINGS_LIST_METHOD = "agentbox/recordings/list";

/** The operator's setting: which kinds are recorded in every session ("terminal,browser"). */
export const RECORD_ENV = "AGENTBOX_RECORD";

export const RECORDING_KINDS = ["terminal", "browser"] as const;
export type RecordingKind = (typeof RECORDING_KINDS)[number];

/** Each format and the file name ending it is stored under. */
export const RECORDING_FORMATS = { asciicast: ".cast", "playwright-trace": ".zip" } as const;
export type RecordingFormat = keyof typeof RECORDING_FORMATS;

/** A recording's id: its file's name without the ending. Lowercase letters, digits and dashes only, so it is no path. */
export const RECORDING_ID = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** What a server reports of one recording. */
export interface RecordingEntry {
  id: string;
  kind: RecordingKind;
  format: RecordingFormat;
  startedAt: string;
  /** null while it is still being recorded. */
  endedAt: string | null;
  bytes: number;
  /** Why it stopped early (the disk budget ran out), or what else its reader should know. */
  note?: string;
}

/** The recordings folder inside a tenant's workspace: agentbox's reserved folder, which the file tools do not show. */
export const RECORDINGS_DIR = path.join(".agentbox", "recordings");

/** A session's own folder in it: a digest of the session id (an id is a credential; the tenant's processes can read this folder). */
export const sessionFolder = (session: string) => createHash("sha256").update(session).digest("hex").slice(0, 32);

export const recordingFileName = (id: string, format: RecordingFormat) => `${id}${RECORDING_FORMATS[format]}`;

/** Which kinds the operator records in every session: AGENTBOX_RECORD=terminal,browser (or "all"). */
export function recordedKinds(value = process.env[RECORD_ENV]): Set<RecordingKind> {
  const words = (value ?? "")
    .split(",")
    .map((w) => w.trim().toLowerCase())
    .filter(Boolean);
  if (words.includes("all")) return new Set(RECORDING_KINDS);
  return new Set(RECORDING_KINDS.filter((kind) => words.includes(kind)));
}

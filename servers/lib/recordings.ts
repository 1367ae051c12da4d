// A server's recordings of its sessions (terminal output, browser traces). Each is a file in the
// session's folder under the workspace's .agentbox/recordings (./recording-names.ts), so it belongs
// to the tenant's uid and counts against its disk budget. The folder is reached from the workspace
// root one name at a time without following links, and a recording written as it happens is
// written through the descriptor it was created with: a name the agent swaps for a symlink
// redirects nothing. When the budget runs out a recording stops, its end marked and the reason
// noted; the tool calls around it never fail for it.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import fsp, { type FileHandle } from "node:fs/promises";
import path from "node:path";
import { readDiskUse, usedUp, type DiskUse } from "./disk-budget.js";
import { errorMessage } from "./log.js";
import { fdPath, lstatAt, withDir } from "./safe-fs.js";
import { onSessionClosed } from "./session-events.js";
import {
  RECORDING_FORMATS,
  RECORDING_ID,
  recordingFileName,
  RECORDINGS_DIR,
  sessionFolder,
  type RecordingEntry,
  type RecordingFormat,
  type RecordingKind,
} from "./recording-names.js";

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_APPEND } = fs.constants;

export const BUDGET_NOTE = "Recording stopped: the tenant's disk budget ran out.";
/** Output waiting to be written beyond this stops the recording rather than the server's memory. */
const MAX_PENDING_BYTES = 16 * 1024 * 1024;
/** Room kept free under the budget, so the line marking the end still fits. */
const BUDGET_MARGIN_BYTES = 64 * 1024;
/** How long a reading of the published disk use is trusted (the hub measures every 2 s or so). */
const DISK_USE_FRESH_MS = 250;
/** Entries a listing reports from the session's folder at most. */
const MAX_LISTED = 1000;

const folderOf = (workspace: string, session: string) => path.join(workspace, RECORDINGS_DIR, sessionFolder(session));

function newId(kind: RecordingKind): string {
  return `${kind}-${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
}

/**
 * What this process knows of the tenant's disk use: the hub's last published reading, and what its
 * recordings wrote since that reading changed. A reading stays the same until the hub's next walk
 * (every 2 s, longer on a busy machine): taken afresh as the room left each time it is read, it gave
 * a recording the same megabyte again and again, and a busy machine's recording overran the budget.
 */
let diskUse: { at: number; use: DiskUse | undefined; writtenSince: number } | undefined;

/** Whether the budget leaves room for `bytes` more (no budget, or none measured yet: yes); if so, they are counted. */
async function roomFor(bytes: number): Promise<boolean> {
  const now = Date.now();
  if (!diskUse || now - diskUse.at > DISK_USE_FRESH_MS) {
    const use = await readDiskUse();
    // a new walk counts what was written before it; until one, what this process writes is added to the last
    const changed = use?.usedBytes !== diskUse?.use?.usedBytes || use?.budgetBytes !== diskUse?.use?.budgetBytes;
    diskUse = { at: now, use, writtenSince: changed ? 0 : (diskUse?.writtenSince ?? 0) };
  }
  const { use } = diskUse;
  if (use && (usedUp(use) || use.budgetBytes - use.usedBytes - BUDGET_MARGIN_BYTES - diskUse.writtenSince < bytes)) return false;
  diskUse.writtenSince += bytes;
  return true;
}

const isSpaceError = (err: unknown) => ["EFBIG", "ENOSPC", "EDQUOT"].includes((err as NodeJS.ErrnoException)?.code ?? "");

export class Recording {
  readonly id: string;
  readonly startedAt = new Date();
  endedAt?: Date;
  bytes = 0;
  note?: string;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private flushing?: Promise<void>;
  private ending?: Promise<void>;

  constructor(
    readonly session: string,
    readonly kind: RecordingKind,
    readonly format: RecordingFormat,
    /** Where the file is written, or undefined for a recording saved in one go when it ends (a trace). */
    private readonly handle: FileHandle | undefined,
    readonly file: string,
    /** The line that marks an early end in the file itself, in the format's own terms. */
    private readonly endMark?: (note: string) => string,
  ) {
    this.id = path.basename(file, RECORDING_FORMATS[format]);
  }

  get active(): boolean {
    return this.endedAt === undefined && this.ending === undefined;
  }

  /** Queue bytes to be written; never throws (a recording that cannot go on stops with a note). */
  write(data: string | Buffer): void {
    if (!this.active || !this.handle) return;
    const bytes = typeof data === "string" ? Buffer.from(data) : data;
    if (this.pendingBytes + bytes.length > MAX_PENDING_BYTES) {
      void this.end("Recording stopped: output came faster than it could be written.");
      return;
    }
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
    this.flushing ??= this.flush().finally(() => (this.flushing = undefined));
  }

  private async flush(): Promise<void> {
    while (this.pending.length && this.handle) {
      const chunk = Buffer.concat(this.pending);
      this.pending = [];
      this.pendingBytes = 0;
      if (!(await roomFor(chunk.length))) return void this.end(BUDGET_NOTE);
      try {
        await this.handle.write(chunk);
        this.bytes += chunk.length;
      } catch (err) {
        return void this.end(isSpaceError(err) ? BUDGET_NOTE : `Recording stopped: ${errorMessage(err)}.`, false);
      }
    }
  }

  /** Write what is queued and close; with a note, the file's end is marked with it first (when there is room). */
  end(note?: string, mark = true): Promise<void> {
    this.ending ??= (async () => {
      if (note) this.note = note;
      await this.flushing;
      if (this.handle) {
        if (note && mark && this.endMark) {
          const line = Buffer.from(this.endMark(note));
          // the tenant may be frozen by now: the mark is best effort, the note in the listing is not
          await this.handle
            .write(line)
            .then(() => (this.bytes += line.length))
            .catch(() => undefined);
        }
        await this.handle.close().catch(() => undefined);
      }
      this.endedAt = new Date();
    })();
    return this.ending;
  }

  /** For a recording saved in one go: its size once saved, or why it was not. */
  saved(bytes: number | undefined, note?: string): void {
    if (bytes !== undefined) this.bytes = bytes;
    if (note) this.note = note;
    this.endedAt ??= new Date();
  }

  entry(): RecordingEntry {
    return {
      id: this.id,
      kind: this.kind,
      format: this.format,
      startedAt: this.startedAt.toISOString(),
      endedAt: this.endedAt?.toISOString() ?? null,
      bytes: this.bytes,
      ...(this.note ? { note: this.note } : {}),
    };
  }
}

/** Each session's recordings this server process made. */
const bySession = new Map<string, Recording[]>();

onSessionClosed(async (session) => {
  const recordings = bySession.get(session) ?? [];
  bySession.delete(session);
  await Promise.all(recordings.map((r) => r.end()));
});

function remember(recording: Recording): Recording {
  const list = bySession.get(recording.session) ?? [];
  list.push(recording);
  bySession.set(recording.session, list);
  return recording;
}

/**
 * Start a recording written as it happens. Undefined (and the reason logged by the caller) when
 * its file cannot be made: a recording is never worth failing the call that asked for it.
 */
export async function startRecording(
  workspace: string,
  session: string,
  kind: RecordingKind,
  format: RecordingFormat,
  endMark?: (note: string) => string,
): Promise<Recording> {
  const id = newId(kind);
  const name = recordingFileName(id, format);
  const handle = await withDir(workspace, folderOf(workspace, session), { create: true }, (dir) =>
    fsp.open(fdPath(dir, name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND, 0o600),
  );
  return remember(new Recording(session, kind, format, handle, path.join(folderOf(workspace, session), name), endMark));
}

/** A recording saved in one go when it ends (a browser trace): its file's path, its folder made (never through a link). */
export async function planRecording(workspace: string, session: string, kind: RecordingKind, format: RecordingFormat): Promise<Recording> {
  const id = newId(kind);
  await withDir(workspace, folderOf(workspace, session), { create: true }, async () => undefined);
  return remember(new Recording(session, kind, format, undefined, path.join(folderOf(workspace, session), recordingFileName(id, format))));
}

/**
 * A session's recordings: those this process made, and files an earlier process of the server left
 * in the session's folder (after a restart), newest last.
 */
export async function listRecordings(workspace: string, session: string): Promise<RecordingEntry[]> {
  const known = bySession.get(session) ?? [];
  const entries = known.map((r) => r.entry());
  const seen = new Set(entries.map((e) => e.id));
  const left = await withDir(workspace, folderOf(workspace, session), {}, async (dir) => {
    const found: RecordingEntry[] = [];
    const names = (await fsp.readdir(fdPath(dir))).slice(0, MAX_LISTED * 2);
    for (const name of names) {
      const format = (Object.keys(RECORDING_FORMATS) as RecordingFormat[]).find((f) => name.endsWith(RECORDING_FORMATS[f]));
      const id = format && name.slice(0, -RECORDING_FORMATS[format].length);
      if (!format || !id || !RECORDING_ID.test(id) || seen.has(id)) continue;
      const kind = id.startsWith("browser-") ? "browser" : id.startsWith("terminal-") ? "terminal" : undefined;
      const stat = lstatAt(dir, name);
      if (!kind || !stat?.isFile()) continue;
      found.push({ id, kind, format, startedAt: stat.birthtime.toISOString(), endedAt: stat.mtime.toISOString(), bytes: stat.size });
    }
    return found;
  }).catch(() => []);
  return [...left, ...entries].sort((a, b) => a.startedAt.localeCompare(b.startedAt)).slice(-MAX_LISTED);
}

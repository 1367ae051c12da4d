// One hub at a time serves the tenants of a workspace. Their uids are derived from the workspace
// (./tenants.ts), and a hub ends every process under those uids that is not below its own servers:
// before it listens, what an earlier run left, and from then on what escaped (./sweeper.ts). A
// second hub started on the same workspace (the README's start command run again in another
// terminal) therefore killed the first one's servers, with every session's terminals and
// interpreters, even when it then failed to listen on the port the first one held.
//
// The lock is a file in the hub's state folder (root's, out of every tenant's reach), named by the
// workspace, holding the pid and start time of the hub that holds it. A lock whose process has
// ended, or whose pid another process now has, is taken over: a hub killed with SIGKILL leaves its
// lock behind, and the hub started after it must still start.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { readProc } from "../../servers/lib/proctree.js";

interface Holder {
  pid: number;
  /** The process's start time (clock ticks since boot): a pid can be reused, this pair cannot. */
  startTime: number;
  workspace: string;
  since: string;
}

/** The hub that holds the workspace, as refused to a second one. */
export class WorkspaceHeld extends Error {
  constructor(readonly holder: Holder) {
    super(
      `Another agentbox hub (pid ${holder.pid}, running since ${holder.since}) serves the workspace ${holder.workspace} with per-tenant uids. ` +
        "Its tenants run under the uids this hub would give them, and a starting hub ends every process under those uids that is not its own: " +
        "starting would kill that hub's servers, terminals and interpreters. Stop that hub first, or start this one with another workspace (AGENTBOX_WORKSPACE).",
    );
  }
}

/** A live process's start time, or undefined when it has ended (a zombie has ended: it only waits to be reaped). */
export function startTimeOf(pid: number): number | undefined {
  const info = readProc(pid);
  return info && info.state !== "Z" && info.state !== "X" ? info.startTicks : undefined;
}

function textOf(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * Makes `file` hold `text` unless it exists: written beside it, then linked into place, so no other hub
 * ever reads it half written (an empty lock would read as unreadable, and be taken over).
 */
function linkedIn(file: string, text: string): boolean {
  const written = `${file}.${process.pid}`;
  fs.writeFileSync(written, text, { mode: 0o600 });
  try {
    fs.linkSync(written, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    return false;
  } finally {
    fs.rmSync(written, { force: true });
  }
}

function holderIn(text: string): Holder | undefined {
  try {
    const holder = JSON.parse(text) as Partial<Holder>;
    return Number.isSafeInteger(holder.pid) && Number.isSafeInteger(holder.startTime) ? (holder as Holder) : undefined;
  } catch {
    return undefined;
  }
}

export class WorkspaceLock {
  private constructor(
    private readonly file: string,
    private readonly text: string,
  ) {}

  /** The lock file for `workspace` in `stateDir`. */
  static fileFor(stateDir: string, workspace: string): string {
    const digest = createHash("sha256").update(path.resolve(workspace)).digest("hex").slice(0, 16);
    return path.join(stateDir, `workspace-${digest}.lock`);
  }

  /** Takes the workspace for this process; throws WorkspaceHeld when a live hub holds it. */
  static acquire(stateDir: string, workspace: string): WorkspaceLock {
    fs.mkdirSync(stateDir, { recursive: true, mode: 0o711 });
    const file = WorkspaceLock.fileFor(stateDir, workspace);
    const mine: Holder = { pid: process.pid, startTime: startTimeOf(process.pid) ?? 0, workspace: path.resolve(workspace), since: new Date().toISOString() };
    const text = JSON.stringify(mine);
    // a stale lock is removed and the file made again: another hub starting at the same moment gets one of the two tries
    for (let attempt = 0; attempt < 3; attempt++) {
      if (linkedIn(file, text)) return new WorkspaceLock(file, text);
      const found = textOf(file);
      if (found === undefined) continue; // removed meanwhile: try again
      const holder = holderIn(found);
      if (holder && holder.pid !== process.pid && startTimeOf(holder.pid) === holder.startTime) throw new WorkspaceHeld(holder);
      // stale (its hub ended, or its pid is another process now) or unreadable: removed unless it changed since it was read
      if (textOf(file) === found) fs.rmSync(file, { force: true });
    }
    throw new Error(`Could not take ${file}: other hubs kept replacing it. Is another agentbox hub starting on the workspace ${workspace}?`);
  }

  /** Gives the workspace up (the hub stops); a lock another hub took over meanwhile is left to it. Safe to call again. */
  release(): void {
    if (textOf(this.file) === this.text) fs.rmSync(this.file, { force: true });
  }
}

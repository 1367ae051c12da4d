// A lock held by a live process: a file in the hub's state folder (root's, out of every tenant's
// reach) holding the pid and start time of the hub that holds it, with whatever that hub says of
// itself. A lock whose process has ended, or whose pid another process now has, is taken over: a
// hub killed with SIGKILL leaves its locks behind, and the hub started after it must still start.
// The workspace lock (./workspace-lock.ts) and the tenants' uid and port locks (./uid-locks.ts,
// ./port-locks.ts) are such files.
import fs from "node:fs";
import path from "node:path";
import { readProc } from "../../servers/lib/proc-table.js";

const MACHINE_LOCK_DIR = "/run/agentbox";

/**
 * Where the hubs on this machine lock what they must not share (tenants' uids and ports): /run/agentbox (root's,
 * emptied at boot), else, where it cannot be made (a container with a read-only root), the hub's state folder.
 */
export function machineLockDir(stateDir: string): string {
  return madeWritable(MACHINE_LOCK_DIR, 0o711) ? MACHINE_LOCK_DIR : stateDir;
}

/** Whether `dir` is there (made with `mode` if it was not) and this process may write in it. */
export function madeWritable(dir: string, mode: number): boolean {
  try {
    fs.mkdirSync(dir, { recursive: true, mode });
    fs.accessSync(dir, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

export interface Holder {
  pid: number;
  /** The process's start time (clock ticks since boot): a pid can be reused, this pair cannot. */
  startTime: number;
  since: string;
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

function holderIn<H extends Holder>(text: string): H | undefined {
  try {
    const holder = JSON.parse(text) as Partial<H>;
    return Number.isSafeInteger(holder.pid) && Number.isSafeInteger(holder.startTime) ? (holder as H) : undefined;
  } catch {
    return undefined;
  }
}

/** The live process other than this one that holds `file`, if any. */
export function liveHolder<H extends Holder>(file: string): H | undefined {
  const found = textOf(file);
  const holder = found === undefined ? undefined : holderIn<H>(found);
  return holder && holder.pid !== process.pid && startTimeOf(holder.pid) === holder.startTime ? holder : undefined;
}

export class LockFile {
  private constructor(
    readonly file: string,
    private readonly text: string,
  ) {}

  /** This process's holder record, with `about` (what it tells a hub it refuses). */
  static holder<A extends object>(about: A): Holder & A {
    return { pid: process.pid, startTime: startTimeOf(process.pid) ?? 0, since: new Date().toISOString(), ...about };
  }

  /** Takes `file` for `mine`, or names the live process that holds it. `what` names the lock in the error when it cannot be taken. */
  static acquire<H extends Holder>(file: string, mine: H, what: string): LockFile | { heldBy: H } {
    const text = JSON.stringify(mine);
    // a stale lock is removed and the file made again: another hub starting at the same moment gets one of the two tries
    for (let attempt = 0; attempt < 3; attempt++) {
      if (linkedIn(file, text)) return new LockFile(file, text);
      const found = textOf(file);
      if (found === undefined) continue; // removed meanwhile: try again
      const holder = holderIn<H>(found);
      if (holder && holder.pid !== process.pid && startTimeOf(holder.pid) === holder.startTime) return { heldBy: holder };
      // stale (its hub ended, or its pid is another process now) or unreadable: removed unless it changed since it was read
      if (textOf(file) === found) fs.rmSync(file, { force: true });
    }
    throw new Error(`Could not take ${file}: other hubs kept replacing it. Is another agentbox hub starting with ${what}?`);
  }

  /** Gives the lock up; a lock another process took over meanwhile is left to it. Safe to call again. */
  release(): void {
    if (textOf(this.file) === this.text) fs.rmSync(this.file, { force: true });
  }
}

/** The lock files a hub holds in one folder (its tenants' uids, their ports), given back when it stops or exits. */
export class HeldLocks {
  private readonly held = new Map<string, LockFile>();
  private exitHooked = false;

  constructor(readonly dir: string) {}

  /** Whether this process holds the lock named `name`. */
  has(name: string): boolean {
    return this.held.has(name);
  }

  /** Takes the lock named `name` for `mine` (a no-op when held already), or names the live process that holds it. */
  take<H extends Holder>(name: string, mine: H, what: string): true | { heldBy: H } {
    if (this.held.has(name)) return true;
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o711 });
    const taken = LockFile.acquire(path.join(this.dir, name), mine, what);
    if ("heldBy" in taken) return taken;
    this.held.set(name, taken);
    if (!this.exitHooked) {
      this.exitHooked = true;
      process.once("exit", () => this.releaseAll());
    }
    return true;
  }

  release(name: string): void {
    this.held.get(name)?.release();
    this.held.delete(name);
  }

  releaseAll(): void {
    for (const lock of this.held.values()) lock.release();
    this.held.clear();
  }
}

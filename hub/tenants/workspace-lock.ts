// One hub at a time serves the tenants of a workspace. Their uids are derived from the workspace
// (./tenants.ts), and a hub ends every process under those uids that is not below its own servers:
// before it listens, what an earlier run left, and from then on what escaped (./sweeper.ts). A
// second hub started on the same workspace (the README's start command run again in another
// terminal) therefore killed the first one's servers, with every session's terminals and
// interpreters, even when it then failed to listen on the port the first one held.
//
// The lock is a file in the hub's state folder named by the workspace (./lock-file.ts). Hubs on other
// workspaces whose tenants would share a uid are kept apart by the uids' own locks (./uid-locks.ts).
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { LockFile, type Holder } from "./lock-file.js";

export { startTimeOf } from "./lock-file.js";

interface WorkspaceHolder extends Holder {
  workspace: string;
}

/** The hub that holds the workspace, as refused to a second one. */
export class WorkspaceHeld extends Error {
  constructor(readonly holder: WorkspaceHolder) {
    super(
      `Another agentbox hub (pid ${holder.pid}, running since ${holder.since}) serves the workspace ${holder.workspace} with per-tenant uids. ` +
        "Its tenants run under the uids this hub would give them, and a starting hub ends every process under those uids that is not its own: " +
        "starting would kill that hub's servers, terminals and interpreters. Stop that hub first, or start this one with another workspace (AGENTBOX_WORKSPACE).",
    );
  }
}

export class WorkspaceLock {
  private constructor(private readonly lock: LockFile) {}

  /** The lock file for `workspace` in `stateDir`. */
  static fileFor(stateDir: string, workspace: string): string {
    const digest = createHash("sha256").update(path.resolve(workspace)).digest("hex").slice(0, 16);
    return path.join(stateDir, `workspace-${digest}.lock`);
  }

  /** Takes the workspace for this process; throws WorkspaceHeld when a live hub holds it. */
  static acquire(stateDir: string, workspace: string): WorkspaceLock {
    fs.mkdirSync(stateDir, { recursive: true, mode: 0o711 });
    const mine = LockFile.holder({ workspace: path.resolve(workspace) });
    const taken = LockFile.acquire(WorkspaceLock.fileFor(stateDir, workspace), mine, `the workspace ${workspace}`);
    if ("heldBy" in taken) throw new WorkspaceHeld(taken.heldBy);
    return new WorkspaceLock(taken);
  }

  /** Gives the workspace up (the hub stops); a lock another hub took over meanwhile is left to it. Safe to call again. */
  release(): void {
    this.lock.release();
  }
}

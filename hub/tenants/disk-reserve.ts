// Room the hub holds back on the tenants' filesystem, for the seconds in which a fast writer can
// outrun the measurement (hub/tenants/disk-budget.ts): a preallocated file of the hub's own. When the
// filesystem fills anyway, the offender is frozen first and then the reserve is freed, so the
// other tenants can still write (and their servers start); it is taken again once there is room.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import type { Logger } from "../../servers/lib/log.js";
import { freeBytes } from "./disk-usage.js";

const run = promisify(execFile);
const MAX_RESERVE_BYTES = 1024 ** 3;
// a twentieth of the filesystem: half of what the default budgets leave to the hub and the system
const RESERVE_SHARE = 0.05;

export class DiskReserve {
  /** The reserve is an unlinked file the hub holds open: its room comes back when the hub exits, however it exits. */
  private fd?: number;

  constructor(
    readonly dir: string,
    readonly bytes: number,
    private readonly log: Logger,
  ) {}

  /**
   * Where the reserve of a hub goes: on the filesystem of the workspace, in a folder no tenant can
   * write (the state dir, or the root of a workspace shared by several tenants), else none.
   */
  static for(workspace: string, stateDir: string, sharedWorkspace: boolean, log: Logger): DiskReserve | undefined {
    try {
      const { bsize, blocks } = fs.statfsSync(workspace);
      const bytes = Math.min(MAX_RESERVE_BYTES, Math.floor(RESERVE_SHARE * bsize * blocks));
      const dir = fs.statSync(stateDir).dev === fs.statSync(workspace).dev ? stateDir : sharedWorkspace ? workspace : undefined;
      return dir ? new DiskReserve(dir, bytes, log) : undefined;
    } catch {
      return undefined;
    }
  }

  get isHeld(): boolean {
    return this.fd !== undefined;
  }

  /** Take the reserve (fallocate: real blocks, written in no time); false where it cannot be taken. */
  async hold(): Promise<boolean> {
    if (this.fd !== undefined) return true;
    const file = path.join(this.dir, `.agentbox-reserve-${randomBytes(6).toString("hex")}`);
    try {
      await run("fallocate", ["--length", String(this.bytes), file]);
      this.fd = fs.openSync(file, "r");
    } catch (err) {
      this.log.warn("could not hold a disk reserve for the tenants; a tenant that fills the disk leaves the others none", { dir: this.dir, err: String(err) });
    } finally {
      fs.rmSync(file, { force: true });
    }
    return this.fd !== undefined;
  }

  /** Give the reserve's room to whoever writes next (the offender is frozen by then). */
  release(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }

  /** What to do now the filesystem has `free` bytes: free the reserve when nearly full, take it back with room to spare. */
  needs(free: number): "release" | "hold" | undefined {
    if (this.isHeld && free < this.bytes / 4) return "release";
    if (!this.isHeld && free > 3 * this.bytes) return "hold";
    return undefined;
  }

  async freeNow(): Promise<number | undefined> {
    return freeBytes(this.dir);
  }
}

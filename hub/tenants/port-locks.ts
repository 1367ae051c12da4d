// Tenants of two hubs on one machine never share ports. Each hub cuts its tenants' blocks from the
// same span (by default every port above the kernel's ephemeral range) in config order, so the
// first tenant of every hub got the same block: a tenant of one hub could connect to a tenant of
// another's services, and take its ports first. Each block a hub gives a tenant is now locked in
// the machine's lock folder (./lock-file.ts) while the hub serves the tenant; a block overlapping
// one another live hub holds is stepped past when the hub chooses it, and refused when the config
// names it (./network.ts).
import fs from "node:fs";
import path from "node:path";
import { formatRange, type PortRange } from "../config/network.js";
import { HeldLocks, liveHolder, LockFile, type Holder } from "./lock-file.js";

interface BlockHolder extends Holder, PortRange {
  tenant: string;
  workspace: string;
}

const FILE = /^ports-(\d+)-(\d+)\.lock$/;

const fileOf = (block: PortRange) => `ports-${block.low}-${block.high}.lock`;

export class PortLocks {
  private readonly held: HeldLocks;

  constructor(
    dir: string,
    private readonly workspace: string,
  ) {
    this.held = new HeldLocks(dir);
  }

  /** The live hub other than this one holding a block that overlaps `block`, if any. */
  holderOverlapping(block: PortRange): BlockHolder | undefined {
    let names: string[];
    try {
      names = fs.readdirSync(this.held.dir);
    } catch {
      return undefined; // no folder yet: no hub has locked a block
    }
    for (const name of names) {
      const range = FILE.exec(name);
      if (!range || this.held.has(name) || Number(range[1]) > block.high || Number(range[2]) < block.low) continue;
      const holder = liveHolder<BlockHolder>(path.join(this.held.dir, name));
      if (holder) return holder;
    }
    return undefined;
  }

  /** Whether `block` is now this hub's for `tenant`: false when it overlaps a block another live hub holds. */
  claim(block: PortRange, tenant: string): boolean {
    if (this.held.has(fileOf(block))) return true;
    if (this.holderOverlapping(block)) return false;
    const mine = LockFile.holder({ ...block, tenant, workspace: path.resolve(this.workspace) });
    if (this.held.take(fileOf(block), mine, `ports ${formatRange(block)}`) !== true) return false;
    // a hub taking an overlapping block of another size at the same moment: both see it, and both step past
    if (this.holderOverlapping(block)) {
      this.release(block);
      return false;
    }
    return true;
  }

  release(block: PortRange): void {
    this.held.release(fileOf(block));
  }

  releaseAll(): void {
    this.held.releaseAll();
  }
}

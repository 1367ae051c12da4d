// The change feed's memory: the most recent coalesced changes, numbered, in a ring of fixed size.
// A cursor names a position in this process's numbering; one from before a loss (the ring wrapped,
// or nobody watched for a while) is answered with what is left and `missed: true`.
import { randomBytes } from "node:crypto";

export type ChangeKind = "added" | "changed" | "removed";

export interface Change {
  /** Workspace-relative, forward slashes. */
  path: string;
  kind: ChangeKind;
  /** ISO time the change was seen. */
  at: string;
}

interface Numbered extends Change {
  seq: number;
}

export interface Page {
  changes: Change[];
  /** The position after these changes: what the next read passes back. */
  next: string;
  missed: boolean;
  /** More changes after `cursor` than `limit` allowed. */
  more: boolean;
}

export class CursorError extends Error {}

export class ChangeRing {
  private readonly slots: Numbered[] = [];
  private next = 0;
  private seq = 0;
  /** The last sequence number of something not kept: a cursor at or before it has missed something. */
  private lostAt = 0;
  // a cursor is only meaningful to the process that numbered it
  private readonly epoch = randomBytes(4).toString("hex");

  constructor(readonly capacity: number) {}

  push(change: Change): void {
    const entry = { ...change, seq: ++this.seq };
    if (this.slots.length < this.capacity) this.slots.push(entry);
    else {
      this.lostAt = Math.max(this.lostAt, this.slots[this.next].seq);
      this.slots[this.next] = entry;
      this.next = (this.next + 1) % this.capacity;
    }
  }

  /** Something happened that the ring does not hold (the watcher was off, a burst overflowed it): earlier cursors missed it. */
  markLoss(): void {
    this.lostAt = ++this.seq;
  }

  /** The position now: a cursor that sees only what comes next. */
  cursor(): string {
    return `${this.epoch}.${this.seq}`;
  }

  /** Changes after `cursor` (everything held when none) that `accept` keeps, at most `limit`. */
  since(cursor: string | undefined, accept: (change: Change) => boolean, limit: number): Page {
    const from = cursor === undefined ? { seq: 0, foreign: false } : this.parse(cursor);
    const ordered = [...this.slots.slice(this.next), ...this.slots.slice(0, this.next)];
    const missed = from.foreign || (cursor !== undefined && from.seq < this.lostAt);
    const changes: Change[] = [];
    let last = Math.max(from.seq, ordered.length ? ordered[0].seq - 1 : this.seq);
    let more = false;
    for (const entry of ordered) {
      if (entry.seq <= from.seq) continue;
      if (!accept(entry)) {
        last = entry.seq;
        continue;
      }
      if (changes.length >= limit) {
        more = true;
        break;
      }
      changes.push({ path: entry.path, kind: entry.kind, at: entry.at });
      last = entry.seq;
    }
    if (!more) last = this.seq;
    return { changes, next: `${this.epoch}.${last}`, missed, more };
  }

  private parse(cursor: string): { seq: number; foreign: boolean } {
    const match = /^([0-9a-f]{8})\.(\d{1,15})$/.exec(cursor);
    if (!match) throw new CursorError(`'${cursor.slice(0, 40)}' is not a \`next\` this tool returned; call without \`since\` to start.`);
    const seq = Number(match[2]);
    // another process's cursor (the server restarted): its position means nothing here
    if (match[1] !== this.epoch || seq > this.seq) return { seq: 0, foreign: true };
    return { seq, foreign: false };
  }
}

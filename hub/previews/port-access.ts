// Whether a port is the tenant's right now: some socket listening on it is owned by the tenant's uid
// (read from the kernel's tables, ./listening-sockets.ts), and none of it is the hub's own. The
// answer names the address to connect to: the tenant's own socket's, so a request never reaches
// another uid's socket on the same port at another address.
import { listeningSockets, ownSocketInodes, type ListeningSocket } from "./listening-sockets.js";
import type { Clock } from "../protocol/clock.js";

export type PortAccess = { ok: true; host: string } | { ok: false; why: "nothing listens" | "another user's" | "the hub's own" };

// A page loads dozens of files at once, and the tables grow with every socket on the machine (a
// tenant can open thousands): one read of them serves every preview's requests for this long.
const CACHE_MS = 250;

/** The address to connect to for a socket: a wildcard one is reached by loopback. */
function connectHost(socket: ListeningSocket): string {
  if (socket.address === "0.0.0.0") return "127.0.0.1";
  if (socket.address === "::") return "::1";
  return socket.address;
}

interface Snapshot {
  at: number;
  byPort: Map<number, ListeningSocket[]>;
  /** The hub's own socket inodes, read when first needed. */
  hubs?: Set<string>;
}

export class PortAccessCheck {
  private snapshot?: Snapshot;

  constructor(
    /** How old a read of the tables may be. */
    private readonly clock: Clock,
    private readonly read: () => ListeningSocket[] = () => listeningSockets(),
  ) {}

  private current(fresh: boolean): Snapshot {
    const now = this.clock.now();
    if (fresh || !this.snapshot || now - this.snapshot.at > CACHE_MS) {
      const byPort = new Map<number, ListeningSocket[]>();
      for (const socket of this.read()) byPort.set(socket.port, [...(byPort.get(socket.port) ?? []), socket]);
      this.snapshot = { at: now, byPort };
    }
    return this.snapshot;
  }

  /** `fresh` reads the tables now (an agent asking right after starting its app), else a read of the last 250 ms serves. */
  check(port: number, uid: number, fresh = false): PortAccess {
    const snapshot = this.current(fresh);
    const sockets = snapshot.byPort.get(port) ?? [];
    if (sockets.length === 0) return { ok: false, why: "nothing listens" };
    const hubs = (snapshot.hubs ??= ownSocketInodes());
    if (sockets.some((s) => hubs.has(s.inode))) return { ok: false, why: "the hub's own" };
    const own = sockets.filter((s) => s.uid === uid);
    if (own.length === 0) return { ok: false, why: "another user's" };
    // prefer IPv4 loopback: what "localhost" dev servers most often take
    const chosen = own.find((s) => s.family === 4) ?? own[0];
    return { ok: true, host: connectHost(chosen) };
  }
}

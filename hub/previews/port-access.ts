// Whether a port is the tenant's right now: some socket listening on it is owned by the tenant's uid
// (read from the kernel's tables, ./listening-sockets.ts), and none of it is the hub's own. The
// answer names the address to connect to: the tenant's own socket's, so a request never reaches
// another uid's socket on the same port at another address.
import { listeningSockets, ownSocketInodes, type ListeningSocket } from "./listening-sockets.js";

export type PortAccess = { ok: true; host: string } | { ok: false; why: "nothing listens" | "another user's" | "the hub's own" };

// a page loads dozens of files at once: one read of /proc serves them all
const CACHE_MS = 250;
const CACHE_ENTRIES = 256;

/** The address to connect to for a socket: a wildcard one is reached by loopback. */
function connectHost(socket: ListeningSocket): string {
  if (socket.address === "0.0.0.0") return "127.0.0.1";
  if (socket.address === "::") return "::1";
  return socket.address;
}

export class PortAccessCheck {
  private readonly cache = new Map<number, { at: number; sockets: ListeningSocket[]; hubs: Set<string> }>();

  constructor(private readonly read: (port: number) => ListeningSocket[] = listeningSockets) {}

  check(port: number, uid: number): PortAccess {
    const now = Date.now();
    let entry = this.cache.get(port);
    if (!entry || now - entry.at > CACHE_MS) {
      const sockets = this.read(port);
      entry = { at: now, sockets, hubs: sockets.length ? ownSocketInodes() : new Set() };
      if (this.cache.size >= CACHE_ENTRIES) this.cache.clear();
      this.cache.set(port, entry);
    }
    const { sockets, hubs } = entry;
    if (sockets.some((s) => hubs.has(s.inode))) return { ok: false, why: "the hub's own" };
    const own = sockets.filter((s) => s.uid === uid);
    if (own.length === 0) return { ok: false, why: sockets.length ? "another user's" : "nothing listens" };
    // prefer IPv4 loopback: what "localhost" dev servers most often take
    const chosen = own.find((s) => s.family === 4) ?? own[0];
    return { ok: true, host: connectHost(chosen) };
  }
}

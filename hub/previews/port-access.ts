// Whether a port is the tenant's right now: some socket listening on it is owned by the tenant's uid
// (read from the kernel's tables, ./listening-sockets.ts), and none of it is the hub's own. The
// answer names the address to connect to: the tenant's own socket's, so a request never reaches
// another uid's socket on the same port at another address. A check may be a moment old, and a
// port can pass to another uid meanwhile: `stillListens` confirms, after a connection is made, that
// the socket checked listened all along.
import { ownSocketInodes, readListening, type ListeningSocket } from "./listening-sockets.js";
import type { Clock } from "../protocol/clock.js";

export type PortAccess = { ok: true; host: string; inode: string } | { ok: false; why: "nothing listens" | "another user's" | "the hub's own" };

// A page loads dozens of files at once, and the tables grow with every socket on the machine (a
// tenant can open thousands): one reading of a port serves its previews' requests for this long.
const CACHE_MS = 250;
// how old a reading that found the tenant's socket may be and still route a request (see check())
const STALE_SERVES_MS = 5000;

/** The address to connect to for a socket: a wildcard one is reached by loopback. */
function connectHost(socket: ListeningSocket): string {
  if (socket.address === "0.0.0.0") return "127.0.0.1";
  if (socket.address === "::") return "::1";
  return socket.address;
}

interface Reading {
  at: number;
  sockets: ListeningSocket[];
  /** The hub's own socket inodes, read when first needed. */
  hubs?: Set<string>;
}

// readings kept for this many ports at most; older ones are dropped first (an agent may ask about any port)
const PORTS_KEPT = 256;

export class PortAccessCheck {
  /** The last reading of each port asked about. */
  private readonly readings = new Map<number, Reading>();
  /** The reading under way for a port, shared by those asking meanwhile. */
  private readonly refreshing = new Map<number, Promise<Reading>>();
  private readonly freshReads: FreshReads;

  constructor(
    /** How old a reading may be. */
    private readonly clock: Clock,
    readPort: (port: number) => Promise<ListeningSocket[]> = readListening,
  ) {
    this.freshReads = new FreshReads(readPort);
  }

  /** A reading begun now (or the one a moment ago's askers already wait for), kept for the port. */
  private read(port: number, beganAfterAsking: boolean): Promise<Reading> {
    const waiting = this.refreshing.get(port);
    if (waiting && !beganAfterAsking) return waiting;
    // read off the event loop, and only the port's lines parsed: a tenant holding thousands of
    // sockets makes the tables large, and a read of them on the loop would stall every tenant's calls
    const read = this.freshReads.after(port).then((sockets) => {
      const reading = { at: this.clock.now(), sockets };
      this.readings.delete(port);
      this.readings.set(port, reading);
      if (this.readings.size > PORTS_KEPT) this.readings.delete(this.readings.keys().next().value!);
      return reading;
    });
    const settled = read.finally(() => this.refreshing.get(port) === settled && this.refreshing.delete(port));
    this.refreshing.set(port, settled);
    return settled;
  }

  /**
   * `fresh` reads the tables now (an agent asking right after starting its app). Else a reading of
   * the last 250 ms serves; so does an older one (up to 5 s) that found the tenant's socket, while a
   * new reading is made behind it: each connection to that socket is confirmed anyway
   * (stillListens), and the requests of a busy preview need not wait for the tables every 250 ms.
   */
  async check(port: number, uid: number, fresh = false): Promise<PortAccess> {
    const kept = fresh ? undefined : this.readings.get(port);
    const age = kept ? this.clock.now() - kept.at : Infinity;
    if (kept && age <= CACHE_MS) return this.judge(kept, uid);
    if (kept && age <= STALE_SERVES_MS) {
      const judged = this.judge(kept, uid);
      if (judged.ok) {
        this.read(port, false).catch(() => undefined);
        return judged;
      }
    }
    return this.judge(await this.read(port, fresh), uid);
  }

  private judge(reading: Reading, uid: number): PortAccess {
    const { sockets } = reading;
    if (sockets.length === 0) return { ok: false, why: "nothing listens" };
    const hubs = (reading.hubs ??= ownSocketInodes());
    if (sockets.some((s) => hubs.has(s.inode))) return { ok: false, why: "the hub's own" };
    const own = sockets.filter((s) => s.uid === uid);
    if (own.length === 0) return { ok: false, why: "another user's" };
    // prefer IPv4 loopback: what "localhost" dev servers most often take
    const chosen = own.find((s) => s.family === 4) ?? own[0];
    return { ok: true, host: connectHost(chosen), inode: chosen.inode };
  }

  /**
   * Whether the socket a check chose (its inode) still listens on the port, owned by the uid, in a
   * read of the tables begun after this call. Asked once a connection to it is made: the socket
   * listened when checked and listens now, so the connection reached it and not another uid's
   * socket that took the port in between (a socket's inode is never reused while it is open).
   */
  async stillListens(port: number, uid: number, inode: string): Promise<boolean> {
    const sockets = await this.freshReads.after(port);
    return sockets.some((s) => s.inode === inode && s.uid === uid);
  }
}

/**
 * Reads of one port's listening sockets, each begun after its caller asked. Callers while a read is
 * under way share the next one, so a page's burst of requests costs two reads, not dozens.
 */
export class FreshReads {
  private readonly running = new Map<number, Promise<ListeningSocket[]>>();
  private readonly queued = new Map<number, Promise<ListeningSocket[]>>();

  constructor(private readonly read: (port: number) => Promise<ListeningSocket[]>) {}

  after(port: number): Promise<ListeningSocket[]> {
    const queued = this.queued.get(port);
    if (queued) return queued;
    const running = this.running.get(port);
    if (!running) return this.start(port);
    // the read under way began before this call: its answer may predate what the caller saw
    const next = running.then(
      () => this.start(port),
      () => this.start(port),
    );
    this.queued.set(port, next);
    return next;
  }

  private start(port: number): Promise<ListeningSocket[]> {
    this.queued.delete(port);
    const read = this.read(port).finally(() => {
      if (this.running.get(port) === read) this.running.delete(port);
    });
    this.running.set(port, read);
    return read;
  }
}

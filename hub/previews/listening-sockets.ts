// Listening TCP sockets as the kernel reports them (/proc/net/tcp and tcp6): each one's local
// address and port, the uid that owns it and its inode. The kernel writes these lines, not the
// process that listens, so the owner cannot be claimed by the agent.
import fs from "node:fs";
import { TableReader } from "./table-reader.js";

export interface ListeningSocket {
  /** The local address, in its usual text form ("127.0.0.1", "::", "::1"). */
  address: string;
  port: number;
  uid: number;
  inode: string;
  family: 4 | 6;
}

const TABLES = [
  ["/proc/net/tcp", 4],
  ["/proc/net/tcp6", 6],
] as const;

// state 0A is TCP_LISTEN
const LISTEN = "0A";

/** How a line of the tables writes a port: after the address's colon, in four hex digits. */
const mentionOf = (port: number) => `:${port.toString(16).toUpperCase().padStart(4, "0")} `;

/** The LISTEN sockets of one /proc/net/tcp* table's text (its header line skipped), optionally on one port only. */
export function parseListening(table: string, family: 4 | 6, port?: number): ListeningSocket[] {
  const sockets: ListeningSocket[] = [];
  // a tenant can hold thousands of sockets: lines that cannot name the port are not split
  const mention = port === undefined ? undefined : mentionOf(port);
  for (const line of table.split("\n").slice(1)) {
    if (mention && !line.includes(mention)) continue;
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
    const f = line.trim().split(/\s+/);
    if (f.length < 10 || f[3] !== LISTEN) continue;
    const [hexAddress, hexPort] = f[1].split(":");
    const uid = Number(f[7]);
    if (!hexAddress || !hexPort || !Number.isInteger(uid)) continue;
    const socket: ListeningSocket = { address: family === 6 ? ipv6(hexAddress) : ipv4(hexAddress), port: parseInt(hexPort, 16), uid, inode: f[9], family };
    if (port === undefined || socket.port === port) sockets.push(socket);
  }
  return sockets;
}

/** Every LISTEN socket of the machine's network namespace, optionally on one port only. */
export function listeningSockets(port?: number): ListeningSocket[] {
  const all: ListeningSocket[] = [];
  for (const [file, family] of TABLES) {
    let table: string;
    try {
      table = fs.readFileSync(file, "utf8");
    } catch {
      continue; // no IPv6 (or no /proc): nothing listens there
    }
    all.push(...parseListening(table, family, port));
  }
  return all;
}

const reader = new TableReader();

/** The LISTEN sockets on one port, read off the event loop (./table-reader.ts): for checks made while requests wait. */
export async function readListening(port: number): Promise<ListeningSocket[]> {
  const tables = await reader.read(
    TABLES.map(([file]) => file),
    mentionOf(port),
  );
  return tables.flatMap((table, i) => parseListening(table, TABLES[i][1], port));
}

// /proc/net/tcp* write addresses as 32-bit words in host (little-endian) byte order
const wordBytes = (word: string) => [3, 2, 1, 0].map((i) => word.slice(i * 2, i * 2 + 2));
const ipv4 = (hex: string) =>
  wordBytes(hex)
    .map((b) => parseInt(b, 16))
    .join(".");
function ipv6(hex: string): string {
  const bytes = [0, 1, 2, 3].flatMap((w) => wordBytes(hex.slice(w * 8, w * 8 + 8)));
  const groups = [0, 1, 2, 3, 4, 5, 6, 7].map((g) => bytes[g * 2] + bytes[g * 2 + 1]);
  const host = new URL(`http://[${groups.join(":")}]/`).hostname; // in its short form, bracketed
  return host.slice(1, -1);
}

/** The inodes of the sockets this process holds open (its own listening sockets among them). */
export function ownSocketInodes(): Set<string> {
  const inodes = new Set<string>();
  let fds: string[];
  try {
    fds = fs.readdirSync("/proc/self/fd");
  } catch {
    return inodes;
  }
  for (const fd of fds) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/self/fd/${fd}`))?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // closed meanwhile
    }
  }
  return inodes;
}

// Test plumbing for the terminal server: a hub running only `terminal`, client sessions
// ("agents") that call its tools, and /proc checks for processes the server left behind.
import fs from "node:fs";
import { after, before } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { startHub, type TestHub } from "../helpers/hub.js";
import { realUid } from "../../servers/lib/proc-table.js";

export { textOf } from "../helpers/hub.js";

export interface Agent {
  client: Client;
  /** Call a terminal tool by its unprefixed name. */
  call(tool: string, args?: Record<string, unknown>, options?: RequestOptions): Promise<CallToolResult>;
  /** Data of a successful call (fails the test on an error result). */
  ok<T = Record<string, any>>(tool: string, args?: Record<string, unknown>): Promise<T>;
  /** End this client session (DELETE on the MCP endpoint), so the hub reports it closed. */
  end(): Promise<void>;
}

export interface Harness {
  hub: TestHub;
  workspace: string;
  connect(): Promise<Agent>;
  /** Pid of the terminal server process, from the hub's status page. */
  serverPid(): Promise<number>;
  stop(): Promise<void>;
}

/** For a describe block: a terminal and one agent, started before its tests and stopped after them. */
export function useTerminal(): { readonly h: Harness; readonly agent: Agent } {
  const suite = {} as { h: Harness; agent: Agent };
  before(async () => {
    suite.h = await startTerminal();
    suite.agent = await suite.h.connect();
  });
  after(async () => {
    await suite.h?.stop();
  });
  return suite;
}

export async function startTerminal(env: Record<string, string> = {}): Promise<Harness> {
  const hub = await startHub({ servers: ["terminal"], env });
  return {
    hub,
    workspace: hub.workspace,
    async connect() {
      const client = await hub.connect();
      const call = async (tool: string, args: Record<string, unknown> = {}, options?: RequestOptions) =>
        (await client.callTool({ name: `terminal_${tool}`, arguments: args }, undefined, options)) as CallToolResult;
      return {
        client,
        call,
        async end() {
          await (client.transport as StreamableHTTPClientTransport).terminateSession();
          await client.close();
        },
        async ok(tool, args) {
          const result = await call(tool, args);
          if (result.isError) throw new Error(`${tool} failed: ${JSON.stringify(result.content)}`);
          return result.structuredContent as any;
        },
      };
    },
    async serverPid() {
      const status = (await (await fetch(`${hub.origin}/`)).json()) as { servers: Array<{ name: string; pid: number | null }> };
      const pid = status.servers.find((s) => s.name === "terminal")?.pid;
      if (!pid) throw new Error(`the hub reports no terminal server pid: ${JSON.stringify(status)}`);
      // The process checks below are only as good as this pid: make sure it is the server.
      if (!cmdline(pid).includes("servers/terminal/main.js")) throw new Error(`pid ${pid} is not the terminal server`);
      return pid;
    },
    stop: () => hub.stop(),
  };
}

interface Proc {
  pid: number;
  ppid: number;
  state: string;
}

function procs(): Proc[] {
  const out: Proc[] = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.push({ pid: Number(name), state: fields[0], ppid: Number(fields[1]) });
    } catch {
      // exited while we looked
    }
  }
  return out;
}

function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
  } catch {
    return "";
  }
}

/** Pids below `root` in the parent chain, zombies included. */
export function descendants(root: number): number[] {
  const all = procs();
  const found: number[] = [];
  const queue = [root];
  while (queue.length) {
    const parent = queue.shift()!;
    for (const p of all) {
      if (p.ppid === parent) {
        found.push(p.pid);
        queue.push(p.pid);
      }
    }
  }
  return found;
}

/** A server's uid, remembered: it is still needed once the server has exited. */
const serverUids = new Map<number, number | undefined>();

/** The server's command launcher (servers/terminal/launcher.ts): its own helper, there between commands. */
export const isLauncher = (pid: number) => cmdline(pid).includes("/agentbox-launcher ");

/**
 * Processes the terminal server started that are still around: anything below it (zombies
 * included) but its launcher, and anything anywhere carrying its tree marker in the environment
 * (which catches processes that escaped with setsid and were reparented away from it).
 */
export function leftovers(serverPid: number): string[] {
  const found = new Set(descendants(serverPid).filter((pid) => !isLauncher(pid)));
  // under its tenant's own uid (tests as root), another hub's terminals are not this server's
  if (!serverUids.has(serverPid) && fs.existsSync(`/proc/${serverPid}`)) serverUids.set(serverPid, realUid(serverPid));
  const serverUid = serverUids.get(serverPid);
  const own = serverUid !== undefined && serverUid !== process.getuid?.() ? serverUid : undefined;
  for (const p of procs()) {
    try {
      if (own !== undefined && realUid(p.pid) !== own) continue;
      if (fs.readFileSync(`/proc/${p.pid}/environ`, "latin1").includes("AGENTBOX_TERMINAL_TREE=")) found.add(p.pid);
    } catch {
      // gone, or not ours to read
    }
  }
  return [...found].map((pid) => `${pid} ${cmdline(pid)}`);
}

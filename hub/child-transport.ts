// How the hub reaches one child, reads what it offers, and notices when it stops answering: the transport (a spawned
// process over stdio, or a URL over Streamable HTTP), the child's stderr relayed into the hub's
// log, arrival order kept between progress and results, and the watchdog that restarts a child
// which stopped reading its input or answering at all.
import readline from "node:readline";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Prompt, ResourceTemplate, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../servers/lib/log.js";
import { TOOL_PREFIX_ENV } from "../servers/lib/names.js";
import type { ChildCalls } from "./child-calls.js";
import type { ServerConfig } from "./config.js";
import { StdioChildTransport } from "./stdio-child.js";

/** How a child is started: its environment, folder and the command wrapper that sets its identity. */
export interface ChildLaunch {
  env: Record<string, string>;
  cwd?: string;
  command(command: string, args: string[]): { command: string; args: string[] };
  /** Largest request (serialized params) the child is sent. */
  maxMessageBytes: number;
}

// the SDK's stdio readers give up on a line longer than 10 MiB; a child's answer may be larger
const CHILD_REPLY_LIMIT = 64 * 1024 * 1024;
// a child whose stdin has not drained for this long has stopped reading: it is restarted
const WEDGED_AFTER_MS = 10_000;
// silence from a child with calls in flight after which it is pinged (and as long to answer)
const PING_AFTER_MS = Number(process.env.AGENTBOX_CHILD_PING_MS) || 30_000;

/**
 * The transport to a child. A stdio child's stderr is always drained (an unread pipe fills up and
 * blocks it): each line goes to `onStderr` and into the hub's log.
 */
export function childTransport(config: ServerConfig, launch: ChildLaunch, prefix: string, log: Logger, onStderr: (line: string) => void): Transport {
  if (config.url) {
    return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers ?? {} } });
  }
  const { command, args } = launch.command(config.command!, config.args ?? []);
  const transport = new StdioChildTransport({
    command,
    args,
    // the prefix last: the child names its sibling tools in texts by it (servers/lib/names.ts)
    env: { ...launch.env, ...config.env, [TOOL_PREFIX_ENV]: prefix },
    cwd: config.cwd ?? launch.cwd,
    maxLineBytes: CHILD_REPLY_LIMIT,
  });
  readline.createInterface({ input: transport.stderr }).on("line", (line) => {
    if (!line.trim()) return;
    onStderr(line);
    relayLogLine(log, line);
  });
  return transport;
}

/** A child's structured (JSON) log line at its own level, anything else as info. */
function relayLogLine(log: Logger, line: string): void {
  try {
    const entry = JSON.parse(line) as Record<string, unknown>;
    const level = (["debug", "info", "warn", "error"].includes(String(entry.level)) ? entry.level : "info") as "info";
    const { msg, level: _l, time: _t, ...fields } = entry;
    log[level](String(msg ?? ""), fields);
  } catch {
    log.info(line);
  }
}

/**
 * Watches one connected child. It must be told (`heard`) whenever the child says anything; it
 * calls `kill` on either sign of a wedged child: its stdin has not drained for a while, or calls
 * wait on it, it has said nothing for a while, and it does not answer a ping either.
 */
export class Watchdog {
  private lastHeard = Date.now();
  private timer?: NodeJS.Timeout;

  heard(): void {
    this.lastHeard = Date.now();
  }

  /** @param current false once this client is no longer the child's (the watchdog then stops) */
  start(client: Client, transport: Transport, watch: { current(): boolean; busy(): boolean; kill(why: string): void }): void {
    let blockedSince = 0;
    let pinging = false;
    this.heard();
    this.timer = setInterval(() => {
      if (!watch.current()) return this.stop();
      if (transport instanceof StdioChildTransport && transport.inputBlocked) {
        blockedSince ||= Date.now();
        if (Date.now() - blockedSince > WEDGED_AFTER_MS) watch.kill(`it stopped reading its input for ${WEDGED_AFTER_MS / 1000} s`);
      } else blockedSince = 0;
      if (pinging || !watch.busy() || Date.now() - this.lastHeard < PING_AFTER_MS) return;
      pinging = true;
      client
        .ping({ timeout: PING_AFTER_MS })
        .then(() => this.heard())
        .catch(() => watch.current() && watch.kill(`it answered nothing, not even a ping, for ${(2 * PING_AFTER_MS) / 1000} s while calls waited on it`))
        .finally(() => (pinging = false));
    }, Math.min(1000, PING_AFTER_MS));
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/**
 * Every message from the child: the watchdog hears it, the hub's own calls take their replies and
 * progress (./child-calls.ts), and the rest goes to the SDK Client. The Client runs notification
 * handlers a microtask late but settles a response at once, dropping its progress handler: a
 * progress notification written just before its result (the usual progress === total, then
 * return) would be discarded as "unknown token" (modelcontextprotocol/typescript-sdk#2580).
 * Deferring its responses by one microtask keeps arrival order.
 */
export function routeIncoming(transport: Transport, calls: ChildCalls, heard: () => void): void {
  const deliver = transport.onmessage;
  if (!deliver) return;
  transport.onmessage = (message, extra) => {
    heard();
    if (calls.take(message)) return;
    if ("id" in message && !("method" in message)) void Promise.resolve().then(() => deliver(message, extra));
    else deliver(message, extra);
  };
}

/** What a connected child offers, every page of it (at most 100 pages of each). */
export async function listOffers(client: Client): Promise<{ tools: Tool[]; prompts: Prompt[]; resourceTemplates: ResourceTemplate[] }> {
  const caps = client.getServerCapabilities() ?? {};
  return {
    tools: caps.tools ? await collectPages((cursor) => client.listTools({ cursor }), "tools") : [],
    prompts: caps.prompts ? await collectPages((cursor) => client.listPrompts({ cursor }), "prompts") : [],
    resourceTemplates: caps.resources ? await collectPages((cursor) => client.listResourceTemplates({ cursor }), "resourceTemplates") : [],
  };
}

async function collectPages<K extends string, T>(
  fetchPage: (cursor?: string) => Promise<{ nextCursor?: string } & Record<K, T[]>>,
  key: K,
): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const result = await fetchPage(cursor);
    items.push(...result[key]);
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return items;
}

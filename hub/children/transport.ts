// How the hub reaches one child, reads what it offers, and notices when it stops answering: the transport (a spawned
// process over stdio, or a URL over Streamable HTTP), the child's stderr relayed into the hub's
// log, arrival order kept between progress and results, and the watchdog that restarts a child
// which stopped reading its input or answering at all.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Prompt, ResourceTemplate, Tool } from "@modelcontextprotocol/sdk/types.js";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { errorMessage, type Logger } from "../../servers/lib/log.js";
import { TOOL_PREFIX_ENV } from "../../servers/lib/names.js";
import type { ChildCalls } from "./calls.js";
import { failureMessage, missingCommand, telling } from "./failure.js";
import { ChildStderr } from "./stderr.js";
import type { FloodGate } from "./flood-gate.js";
import type { Clock } from "../protocol/clock.js";
import type { QueueSettings } from "./queue.js";
import type { OutputLimits, ServerConfig } from "../config/config.js";
import { StdioChildTransport } from "./stdio-transport.js";

/** How a child is started (its environment, folder and the command wrapper that sets its identity), and the tenant's bounds on it. */
export interface ChildLaunch {
  env: Record<string, string>;
  cwd?: string;
  command(command: string, args: string[]): { command: string; args: string[] };
  /** Largest request (serialized params) the child is sent. */
  maxMessageBytes: number;
  /** Bounds on what the child's output may cost the hub. */
  output: OutputLimits;
  /** The tenant's share of slots for tasks and its budget for waiting calls (./queue.ts). */
  queueing: QueueSettings;
  /** The hub's time: the windows of its output's flood gates and the pauses between list refreshes. */
  clock: Clock;
}

// the SDK's stdio readers give up on a line longer than 10 MiB; a child's answer may be larger
const CHILD_REPLY_LIMIT = 64 * 1024 * 1024;
// a child whose stdin has not drained for this long has stopped reading: it is restarted
const WEDGED_AFTER_MS = 10_000;
// silence from a child with calls in flight after which it is pinged (and as long to answer)
const PING_AFTER_MS = Number(process.env.AGENTBOX_CHILD_PING_MS) || 30_000;

/** A transport to a child, with the reader of its stderr when it is a process of ours. */
export interface ChildConnection {
  transport: Transport;
  stderr?: ChildStderr;
}

/**
 * The transport to a child. A stdio child's stderr is always drained (an unread pipe fills up and
 * blocks it), its lines bounded and relayed into the hub's log (./stderr.ts).
 */
export function childTransport(config: ServerConfig, launch: ChildLaunch, prefix: string, log: Logger): ChildConnection {
  if (config.url) {
    return { transport: new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers ?? {} } }) };
  }
  const { command, args } = launch.command(config.command!, config.args ?? []);
  const transport = new StdioChildTransport({
    command,
    args,
    env: childEnv(config, launch, prefix),
    cwd: config.cwd ?? launch.cwd,
    maxLineBytes: CHILD_REPLY_LIMIT,
  });
  return { transport, stderr: new ChildStderr(transport.stderr, log, launch.output, launch.clock) };
}

export function childEnv(config: ServerConfig, launch: ChildLaunch, prefix: string): Record<string, string> {
  // the prefix last: the child names its sibling tools in texts by it (servers/lib/names.ts)
  return { ...launch.env, ...config.env, [TOOL_PREFIX_ENV]: prefix };
}

/**
 * Why a child's start failed, in words an operator or a model can act on: what its stderr said,
 * how it ended, and for a command that could not be run, where it was looked for.
 */
export async function startFailure(err: unknown, connection: ChildConnection, config: ServerConfig, launch: ChildLaunch): Promise<string> {
  const { transport, stderr } = connection;
  if (!stderr || !(transport instanceof StdioChildTransport)) return errorMessage(err);
  const spawnError = (err as { syscall?: string }).syscall?.startsWith("spawn") ? (err as NodeJS.ErrnoException) : undefined;
  // what the process wrote on its way out may still be on its way through the pipe
  if (transport.exit) await Promise.race([stderr.ended, new Promise((r) => setTimeout(r, 1000).unref())]);
  const exit = transport.exit;
  // 126 and 127: "cannot execute" and "not found" from a wrapper (setpriv, prlimit, a shell)
  const lookedFor =
    spawnError || exit?.code === 126 || exit?.code === 127
      ? missingCommand(config.command!, config.cwd ?? launch.cwd, { ...getDefaultEnvironment(), ...childEnv(config, launch, "") }.PATH)
      : undefined;
  const what = spawnError
    ? `could not run ${config.command} (${spawnError.code ?? spawnError.message})`
    : exit
      ? "exited before it was ready"
      : errorMessage(err);
  return failureMessage(what, exit, [...(lookedFor ? [lookedFor] : []), ...telling(stderr.memory, "first")]);
}

/** Why a child that was running stopped: how it ended and the last telling lines it wrote. */
export async function exitReason(connection: ChildConnection, pid: number | undefined): Promise<string> {
  const { transport, stderr } = connection;
  if (!stderr || !(transport instanceof StdioChildTransport)) return `exited unexpectedly (pid ${pid})`;
  await Promise.race([stderr.ended, new Promise((r) => setTimeout(r, 100).unref())]);
  return failureMessage("exited unexpectedly", transport.exit, telling(stderr.memory, "last"), pid);
}

/** What the watchdog asks a child whether it still answers with: either era's client. */
export interface Pingable {
  ping(options: { timeout: number }): Promise<unknown>;
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
  start(client: Pingable, transport: Transport, watch: { current(): boolean; busy(): boolean; kill(why: string): void }): void {
    let blockedSince = 0;
    let pinging = false;
    this.heard();
    this.timer = setInterval(
      () => {
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
      },
      Math.min(1000, PING_AFTER_MS),
    );
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** Notifications a child sends clients through the hub: log lines and resource updates. */
const BOUNDED_NOTICES = new Set(["notifications/message", "notifications/resources/updated"]);

/**
 * Every message from the child: the watchdog hears it, the hub's own calls take their replies and
 * progress (./calls.ts), and the rest goes to the SDK Client. The Client runs notification
 * handlers a microtask late but settles a response at once, dropping its progress handler: a
 * progress notification written just before its result (the usual progress === total, then
 * return) would be discarded as "unknown token" (modelcontextprotocol/typescript-sdk#2580).
 * Deferring its responses by one microtask keeps arrival order.
 */
export function routeIncoming(transport: Transport, calls: ChildCalls, heard: () => void, notices: FloodGate): void {
  const deliver = transport.onmessage;
  if (!deliver) return;
  transport.onmessage = (message, extra) => {
    heard();
    if (calls.take(message)) return;
    // what fans out to clients is bounded per child, before the SDK parses it (./flood-gate.ts)
    if ("method" in message && !("id" in message) && BOUNDED_NOTICES.has(message.method) && !notices.admit()) return;
    if ("id" in message && !("method" in message)) void Promise.resolve().then(() => deliver(message, extra));
    else deliver(message, extra);
  };
}

/** Tells `heard` of every message from the child, before the client it was connected to takes it. */
export function hearIncoming(transport: Transport, heard: () => void): void {
  const deliver = transport.onmessage;
  if (!deliver) return;
  transport.onmessage = (message, extra) => {
    heard();
    deliver(message, extra);
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

async function collectPages<K extends string, T>(fetchPage: (cursor?: string) => Promise<{ nextCursor?: string } & Record<K, T[]>>, key: K): Promise<T[]> {
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

// Which terminals belong to which client session. A client only ever sees its own terminals;
// they are killed when the hub reports the session closed, when the client leaves one untouched
// for the idle time, and on shutdown.
import { createLogger } from "../lib/log.js";
import { SessionStore } from "../lib/session-state.js";
import { toolName } from "../lib/names.js";
import { ToolError } from "../lib/tool.js";
import { settings } from "./settings.js";
import { Terminal, type TerminalOptions } from "./terminal.js";

const log = createLogger({ server: "terminal", part: "registry" });

type Terminals = Map<string, Terminal>;

const store = new SessionStore<Terminals>({
  create: () => new Map(),
  async dispose(terminals, session, reason) {
    await Promise.all([...terminals.values()].map((t) => t.kill()));
    if (terminals.size > 0) log.info("terminals freed", { session, reason, count: terminals.size });
    terminals.clear();
  },
  idleMs: settings.idleMs,
  // Each terminal has its own idle time: one the client uses does not keep its others alive.
  async sweepParts(terminals, session, cutoff) {
    for (const terminal of [...terminals.values()]) {
      if (!terminal.idleSince(cutoff)) continue;
      log.info("idle terminal killed", { session, id: terminal.id, idleMs: settings.idleMs });
      // Forget it only once it is dead, so a listing never hides a terminal still running.
      await terminal.kill();
      terminals.delete(terminal.id);
    }
    return terminals.size > 0;
  },
  describeAs: "terminals",
  describe: (terminals) => [...terminals.values()].map((t) => ({ id: t.id, pid: t.pid, alive: t.alive, createdAt: t.createdAt.toISOString() })),
});

export async function listTerminals(session: string): Promise<Terminal[]> {
  const terminals = await store.peek(session);
  return terminals ? [...terminals.values()] : [];
}

export async function openTerminal(session: string, options: TerminalOptions): Promise<Terminal> {
  const terminals = await store.get(session);
  const live = [...terminals.values()].filter((t) => t.alive);
  if (live.length >= settings.maxSessions) {
    throw new ToolError(
      `This client already has ${live.length} running terminals, the limit (AGENTBOX_TERMINAL_MAX_SESSIONS=${settings.maxSessions}). ` +
        `Close one with ${toolName("session_kill")} first (running: ${live.map((t) => t.id).join(", ")}).`,
    );
  }
  const terminal = new Terminal(options);
  terminals.set(terminal.id, terminal);
  return terminal;
}

/** The client's terminal with this id. Another client's terminal is reported as unknown, like a missing one. */
export async function findTerminal(session: string, id: string): Promise<Terminal> {
  const terminal = (await store.peek(session))?.get(id);
  if (!terminal) {
    const known = (await listTerminals(session)).map((t) => t.id);
    throw new ToolError(
      `No terminal '${id}' in this client session. ${known.length ? `Yours: ${known.join(", ")}.` : `You have none; create one with ${toolName("session_create")}.`}`,
    );
  }
  terminal.touch();
  return terminal;
}

export async function closeTerminal(session: string, id: string): Promise<{ terminal: Terminal; killed: number }> {
  const terminal = await findTerminal(session, id);
  (await store.peek(session))?.delete(id);
  return { terminal, killed: await terminal.kill() };
}

export async function closeAllTerminals(): Promise<void> {
  await store.releaseAll();
}

// Limits read from the environment once at startup; bad values fall back to the defaults
// (with a warning) rather than stopping the server.
import type { Logger } from "../lib/log.js";
import { withSessionClaim } from "../lib/session-claim.js";

export interface TerminalConfig {
  /** Live terminals one client session may hold at once. */
  maxSessions: number;
  /** A terminal the client has not touched for this long is killed (0: never). */
  idleMs: number;
  /** Bytes kept per exec stream and per terminal scrollback; the tail is kept. */
  maxOutput: number;
}

const DEFAULTS: TerminalConfig = { maxSessions: 8, idleMs: 30 * 60_000, maxOutput: 1024 * 1024 };

function positiveInt(name: string, fallback: number, log?: Logger, allowZero = false): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (Number.isInteger(value) && (value > 0 || (allowZero && value === 0))) return value;
  log?.warn("ignoring invalid setting", { name, value: raw, using: fallback });
  return fallback;
}

export function loadConfig(log?: Logger): TerminalConfig {
  return {
    maxSessions: positiveInt("AGENTBOX_TERMINAL_MAX_SESSIONS", DEFAULTS.maxSessions, log),
    idleMs: positiveInt("AGENTBOX_TERMINAL_IDLE_MS", DEFAULTS.idleMs, log, true),
    maxOutput: positiveInt("AGENTBOX_EXEC_MAX_OUTPUT", DEFAULTS.maxOutput, log),
  };
}

/**
 * The environment a command or terminal starts with: the server's own, minus the hub's API key
 * (a command has no business reading it), plus the caller's variables, the tree marker and the
 * client session's claim (../lib/session-claim.ts: the hub reads it to attribute processes that
 * escaped their tree; the caller's variables cannot forge it).
 */
export function childEnv(extra: Record<string, string> | undefined, markerName: string, marker: string, sessionToken?: string): Record<string, string> {
  return withSessionClaim({ ...inheritedEnv(), ...extra, [markerName]: marker }, sessionToken);
}

// Read once: nothing changes the server's environment while it runs, and reading process.env
// whole (each variable through a getter) was a twentieth of the server's CPU per command.
let inherited: Record<string, string> | undefined;
function inheritedEnv(): Record<string, string> {
  if (!inherited) {
    inherited = {};
    for (const [key, value] of Object.entries(process.env)) {
      if (value !== undefined && key !== "AGENTBOX_API_KEY") inherited[key] = value;
    }
  }
  return inherited;
}

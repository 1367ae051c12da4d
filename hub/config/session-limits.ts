// Limits on what clients may hold in the hub: the events kept for resuming streams, how many
// sessions a tenant and a client address may have open, and how fast they may open them
// (hub/sessions/admission.ts). Each from its AGENTBOX_* variable, with a default.
import { ConfigError } from "./schema.js";
import { positiveInt } from "./env.js";
import { rateOf, type Rate } from "./rate.js";

export interface SessionLimits {
  /** Bytes of undelivered events kept for one session's resumable streams (AGENTBOX_EVENT_STORE_BYTES). */
  eventStoreBytes: number;
  /** The same across all sessions (AGENTBOX_EVENT_STORE_TOTAL_BYTES). */
  eventStoreTotalBytes: number;
  /** Open sessions per tenant (AGENTBOX_MAX_SESSIONS). */
  maxSessions: number;
  /** Open sessions per client address of a keyless hub (AGENTBOX_MAX_SESSIONS_PER_CLIENT). */
  maxSessionsPerClient: number;
  /** At a cap, a session idle this long with no call running is closed to make room (AGENTBOX_SESSION_RECLAIM_IDLE_MS). */
  reclaimIdleMs: number;
  /** New sessions per principal (AGENTBOX_SESSION_RATE, "off" to turn off); a burst of five times as many is allowed. */
  sessionRate: Rate | false;
}

const MiB = 1024 * 1024;

export function sessionLimitsFromEnv(env: NodeJS.ProcessEnv): SessionLimits {
  return {
    // one result of the largest size a child may send (AGENTBOX_MAX_MESSAGE_BYTES, 8 MiB) fits, with its progress
    eventStoreBytes: positiveInt(env.AGENTBOX_EVENT_STORE_BYTES, "AGENTBOX_EVENT_STORE_BYTES") ?? 16 * MiB,
    // eight such sessions at once; a small part of a default Node heap (2 GiB and more on 64-bit)
    eventStoreTotalBytes: positiveInt(env.AGENTBOX_EVENT_STORE_TOTAL_BYTES, "AGENTBOX_EVENT_STORE_TOTAL_BYTES") ?? 128 * MiB,
    // a session costs ~50 KB: 1000 are ~50 MB per tenant
    maxSessions: positiveInt(env.AGENTBOX_MAX_SESSIONS, "AGENTBOX_MAX_SESSIONS") ?? 1000,
    maxSessionsPerClient: positiveInt(env.AGENTBOX_MAX_SESSIONS_PER_CLIENT, "AGENTBOX_MAX_SESSIONS_PER_CLIENT") ?? 200,
    reclaimIdleMs: positiveInt(env.AGENTBOX_SESSION_RECLAIM_IDLE_MS, "AGENTBOX_SESSION_RECLAIM_IDLE_MS") ?? 60_000,
    sessionRate: parseSessionRate(env.AGENTBOX_SESSION_RATE),
  };
}

function parseSessionRate(value: string | undefined): Rate | false {
  if (value === undefined || value.trim() === "") return { points: 20, seconds: 1 };
  if (["off", "false", "0", "none"].includes(value.trim().toLowerCase())) return false;
  const rate = rateOf(value);
  if (!rate) throw new ConfigError(`AGENTBOX_SESSION_RATE must be "off" or a rate like "20/s" or "600/min", got "${value}"`);
  return rate;
}

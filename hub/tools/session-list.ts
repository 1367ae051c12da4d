// What hub_sessions tells a client about its tenant's sessions and 2026 contexts: each one's
// transport, protocol era and version, and the client it serves, for the caller's own tenant only.
// Ids are never shown for any but the caller's own session: an Mcp-Session-Id is all another client
// of the same tenant would need to drive that session, so the others are named by a digest.
import { z } from "zod";
import { itemPageOutput } from "../../servers/lib/paging.js";
import { sessionLabel } from "../observability/session-label.js";
import { ERAS, SESSION_KINDS, eraOf, tenantPrincipal, type ClientSession, type SessionRegistry } from "../sessions/registry.js";

/** A client's own words about itself are shown, bounded: a name is not a place for a novel. */
const CLIENT_NAME_CHARS = 80;

/** The caller's own era, described once (its tenant's entries repeat the fields bare: the bytes of tools/list are every client's cost). */
export const eraFields = {
  era: z.enum(ERAS).describe("modern: MCP 2026-07-28, no session; legacy: 2025"),
  protocolVersion: z.string().nullable().describe("What initialize settled on; 2026-07-28 for a context; null for plain JSON"),
};

export const sessionEntry = z.object({
  label: z.string().describe("A digest of its id"),
  current: z.boolean().describe("The caller's"),
  transport: z.enum(SESSION_KINDS),
  era: z.enum(ERAS),
  protocolVersion: z.string().nullable(),
  client: z.string().optional().describe("Its name and version, as it gave them"),
  ageSeconds: z.number(),
  callsInFlight: z.number(),
});

export const sessionListOutput = {
  tenantSessions: z.array(sessionEntry).describe("Your tenant's sessions and contexts (never another tenant's)"),
  ...itemPageOutput,
};

export type SessionEntry = z.infer<typeof sessionEntry>;

const seconds = (ms: number) => Math.round(ms / 1000);

export function describeSession(session: ClientSession, caller: ClientSession): SessionEntry {
  const info = session.clientInfo;
  const client = info ? `${String(info.name)} ${String(info.version)}`.slice(0, CLIENT_NAME_CHARS) : undefined;
  return {
    label: sessionLabel(session.id),
    current: session === caller,
    transport: session.kind,
    ...eraOf(session),
    ...(client ? { client } : {}),
    ageSeconds: seconds(session.ageMs),
    callsInFlight: session.inflight.size,
  };
}

/** The caller's tenant's sessions, oldest first (a stable order, so paging does not skip or repeat one). */
export function tenantSessions(sessions: SessionRegistry, caller: ClientSession): ClientSession[] {
  return [...sessions.of(tenantPrincipal(caller.tenant))].sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
}

/** One line of the text a model reads. */
export function sessionLine(entry: SessionEntry): string {
  const version = entry.protocolVersion ?? "plain JSON, no handshake";
  const who = entry.client ? ` · ${entry.client}` : "";
  return `${entry.current ? "*" : " "} ${entry.label}  ${entry.transport.padEnd(10)} ${entry.era} ${version}${who} · ${entry.ageSeconds} s old, ${entry.callsInFlight} calls running`;
}

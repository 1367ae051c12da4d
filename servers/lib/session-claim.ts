// How a process says which client session it belongs to. The servers put a session's claim in the
// environment of everything they start; the hub's sweeper lets a process that escaped its server
// live while the session its claim names lives. A claim is derived from the session's callback
// token (which only the hub and that session's servers know), so a process cannot forge one for a
// session it does not belong to, as it could with the session id (guessable for sessionless
// clients, and shown to the client).
import { createHash } from "node:crypto";

/** The environment variable carrying the claim; defined here only. */
export const SESSION_CLAIM_ENV = "AGENTBOX_SESSION";

/** The claim of the session whose callback token this is. */
export function sessionClaim(token: string): string {
  return createHash("sha256").update(`agentbox session claim\0${token}`).digest("base64url");
}

/**
 * An environment with the session's claim set (first, so that a bounded read of the start of
 * /proc/<pid>/environ finds it) and any claim the caller passed in dropped: a caller cannot forge it.
 * Without a token (a server used without the hub) no claim is set.
 */
export function withSessionClaim(env: Record<string, string>, token: string | undefined): Record<string, string> {
  const { [SESSION_CLAIM_ENV]: _forged, ...rest } = env;
  return token ? { [SESSION_CLAIM_ENV]: sessionClaim(token), ...rest } : rest;
}

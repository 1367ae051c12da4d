// More than one context per client: a handle names one of its tenant's contexts (a ClientSession
// of kind "context", with its own terminals, interpreters and browser pages), and a call that
// passes it as its `context` argument runs as that session. A 2026-07-28 client has no session,
// so this is how it holds several states; a 2025 client may pass one too.
//
// A handle is `<session id>.<expiry>.<mac>`: the session id begins with `<replica>.` on a named
// replica (hub/http/replica.ts), so a router routes Mcp-Param-Context as it routes Mcp-Session-Id;
// the MAC (a key random per hub process) covers the tenant, the id and the expiry, so a forged,
// altered, another tenant's or an earlier run's handle names nothing, and an expired one is refused
// whatever the clock of the session sweep says.
import type { Clock } from "../protocol/clock.js";
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { CONTEXT_ARGUMENT } from "../catalog/context-argument.js";
import type { SessionView } from "../catalog/selection.js";
import type { ServedTenant } from "../tenants/served-tenant.js";
import { isPlainObject } from "../protocol/jsonrpc.js";
import type { MintedSecrets } from "../observability/minted-secrets.js";
import type { Params } from "./forward.js";
import { MODERN_PROTOCOL_VERSION, type ClientSession, type SessionKind, type SessionRegistry } from "./registry.js";

export const NEW_CONTEXT_TOOL = "hub_new_context";
/** The hub's own tools that take a `context`: they describe or end that context instead of the caller's. */
export const HUB_CONTEXT_TOOLS: ReadonlySet<string> = new Set(["hub_sessions", "hub_calls", "hub_end_session"]);

export interface ContextDeps {
  sessions: SessionRegistry;
  /** How long a context lives at most, used or not (AGENTBOX_CONTEXT_TTL_MS). */
  ttlMs: number;
  /** How long a context may idle before it is closed, as any session (AGENTBOX_SESSION_IDLE_MS). */
  idleMs: number;
  /** A new session id (`<replica>.<uuid>` on a named replica). */
  newId(): string;
  /** A session opened under the caps and churn limits (hub/sessions/admission.ts), or the refusal to send. */
  open(id: string, kind: SessionKind, tenant: ServedTenant, clientKey: string, view: SessionView): Promise<ClientSession | Response>;
  /** Where a handle's MAC is known while its context lives, so nothing the hub writes down shows it (its id is known as the session's). */
  secrets: MintedSecrets;
  /** When a context expires. */
  clock: Clock;
}

export interface MintedContext {
  handle: string;
  session: ClientSession;
  expiresAt: Date;
}

/** A call as it runs: in the caller's own session, or in the context its `context` argument named (without that argument). */
export interface ContextCall {
  session: ClientSession;
  params: Params;
}

/** Whether a call's arguments carry a `context`. */
export function namesContext(params: Params): boolean {
  const args = params.arguments;
  return isPlainObject(args) && Object.hasOwn(args, CONTEXT_ARGUMENT);
}

/** Far above any handle this hub mints (a replica name is at most 63 characters). */
const MAX_HANDLE_LENGTH = 512;

const NEW_ONE = `Call ${NEW_CONTEXT_TOOL} for a new handle, or leave \`${CONTEXT_ARGUMENT}\` out to use your default context.`;

export class Contexts {
  private readonly key = randomBytes(32);

  constructor(private readonly deps: ContextDeps) {}

  /** A new context of the caller's tenant (counted against its session caps), or why not. */
  async mint(caller: ClientSession): Promise<MintedContext | string> {
    const opened = await this.deps.open(this.deps.newId(), "context", caller.tenant, caller.clientKey, caller.view);
    if (opened instanceof Response) return refusalText(opened);
    opened.negotiatedVersion = caller.kind === "modern" ? MODERN_PROTOCOL_VERSION : caller.negotiatedVersion;
    const expiry = this.deps.clock.now() + this.deps.ttlMs;
    // what it holds is freed when it expires, whether or not anyone calls with it again
    this.deps.clock.after(this.deps.ttlMs, () => void this.deps.sessions.close(opened.id, "ttl"));
    const mac = this.mac(caller.tenant, opened.id, expiry);
    if (!opened.closed) this.deps.secrets.remember(opened, mac);
    return { handle: `${opened.id}.${expiry.toString(36)}.${mac}`, session: opened, expiresAt: new Date(expiry) };
  }

  /**
   * The call as it runs: when its arguments carry `context`, that argument comes off and the call
   * runs as the context it names, if the handle is good for the caller's tenant and the tool takes
   * one; otherwise an error result saying what to do.
   */
  resolve(caller: ClientSession, params: Params, tool: string, takesContext: boolean): ContextCall | { refused: CallToolResult } {
    if (!namesContext(params)) return { session: caller, params };
    const { [CONTEXT_ARGUMENT]: handle, ...rest } = params.arguments as Record<string, unknown>;
    if (!takesContext) {
      return refusal(`${tool} takes no \`${CONTEXT_ARGUMENT}\` argument: its server keeps no state per context. Call it without \`${CONTEXT_ARGUMENT}\`.`);
    }
    const found = this.find(caller.tenant, handle);
    return typeof found === "string" ? refusal(found) : { session: found, params: { ...params, arguments: rest } };
  }

  /** The open context a handle names for this tenant, or why there is none. */
  private find(tenant: ServedTenant, handle: unknown): ClientSession | string {
    if (typeof handle !== "string")
      return `\`${CONTEXT_ARGUMENT}\` must be a context handle (the string ${NEW_CONTEXT_TOOL} returned), not ${describe(handle)}.`;
    // a handle is ~120 characters; a megabyte of one is not worth a MAC
    const macAt = handle.length > MAX_HANDLE_LENGTH ? -1 : handle.lastIndexOf(".");
    const expiryAt = handle.lastIndexOf(".", macAt - 1);
    const id = handle.slice(0, Math.max(0, expiryAt));
    const written = handle.slice(expiryAt + 1, macAt);
    const expiry = /^[0-9a-z]{1,11}$/.test(written) ? parseInt(written, 36) : NaN;
    if (expiryAt <= 0 || !Number.isSafeInteger(expiry) || !this.macMatches(handle.slice(macAt + 1), tenant, id, expiry)) {
      return (
        `The context handle is not one this hub gave you: it was altered, belongs to another API key or replica, or was minted before the hub ` +
        `restarted. ${NEW_ONE}`
      );
    }
    const session = this.deps.sessions.get(id);
    if (this.deps.clock.now() >= expiry) {
      if (session) void this.deps.sessions.close(id, "ttl");
      return `This context expired at ${new Date(expiry).toISOString()} (contexts last at most ${duration(this.deps.ttlMs)}), and what it held was freed. ${NEW_ONE}`;
    }
    if (!session || session.closed || session.tenant !== tenant) {
      return (
        `This context has ended (by hub_end_session, or idle for over ${duration(this.deps.idleMs)}, or to make room for another session), and ` +
        `what it held was freed. ${NEW_ONE}`
      );
    }
    return session;
  }

  private mac(tenant: ServedTenant, id: string, expiry: number): string {
    return createHmac("sha256", this.key).update(`${tenant.name}\n${id}\n${expiry}`).digest("base64url");
  }

  private macMatches(given: string, tenant: ServedTenant, id: string, expiry: number): boolean {
    const expected = Buffer.from(this.mac(tenant, id, expiry));
    const actual = Buffer.from(given);
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  }
}

const refusal = (text: string) => ({ refused: { content: [{ type: "text", text }], isError: true } as CallToolResult });

const describe = (value: unknown) => (value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`);

function duration(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${Math.round(ms / 1000)} s`;
}

/** The message of an admission refusal (a JSON-RPC error response), for the model to read. */
async function refusalText(response: Response): Promise<string> {
  const body = (await response.json().catch(() => undefined)) as { error?: { message?: string } } | undefined;
  const why = body?.error?.message ?? `refused (HTTP ${response.status}).`;
  return `No new context: ${why} Contexts count as sessions: end the ones you are done with (hub_end_session with their \`${CONTEXT_ARGUMENT}\`).`;
}

// Opaque access tokens, asked about at the issuer's introspection endpoint (RFC 7662) with the
// hub's own client credentials. An answer is kept (by the token's digest) until the token expires,
// at most a minute, and a refusal for half a minute, so a client repeating its token costs the
// issuer one question; at most a few questions are in flight at once, so a flood of made-up tokens
// cannot turn the hub into a flood against the issuer (past the bound: 503, try again).
import { createHash } from "node:crypto";
import type { OAuthConfig } from "../../config/oauth.js";
import type { Clock } from "../../protocol/clock.js";
import type { Issuer } from "./issuer.js";
import { IssuerUnavailable } from "./issuer.js";

const MAX_CACHED = 1000;
const MAX_IN_FLIGHT = 8;
const KEEP_MS = 60_000;
const KEEP_REFUSAL_MS = 30_000;
const SKEW_SECONDS = 30;

/** What introspection says of a token: active for this hub, with its claims; or why not. */
export type Introspected = { ok: true; claims: Record<string, unknown> } | { ok: false; description: string };

export class Introspection {
  private readonly cache = new Map<string, { verdict: Introspected; until: number }>();
  private inFlight = 0;

  constructor(
    private readonly config: OAuthConfig & { introspection: NonNullable<OAuthConfig["introspection"]> },
    private readonly issuer: Issuer,
    private readonly clock: Clock,
    private readonly audiences: () => string[],
    private readonly fetchFn: typeof fetch = fetch,
  ) {}

  /** Throws IssuerUnavailable when the issuer cannot be asked (or too many questions are in flight). */
  async check(token: string): Promise<Introspected> {
    const key = createHash("sha256").update(token).digest("base64url");
    const cached = this.cache.get(key);
    if (cached && cached.until > this.clock.now()) return cached.verdict;
    if (this.inFlight >= MAX_IN_FLIGHT) throw new IssuerUnavailable("too many tokens are being checked with the authorization server at once; try again");
    this.inFlight++;
    let verdict: Introspected;
    try {
      verdict = this.judge(await this.ask(token));
    } finally {
      this.inFlight--;
    }
    const exp = verdict.ok && typeof verdict.claims.exp === "number" ? verdict.claims.exp * 1000 : Infinity;
    if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, { verdict, until: Math.min(exp, this.clock.now() + (verdict.ok ? KEEP_MS : KEEP_REFUSAL_MS)) });
    return verdict;
  }

  private async ask(token: string): Promise<Record<string, unknown>> {
    const endpoint = this.config.introspection.endpoint ?? (await this.issuer.introspectionEndpoint());
    if (!endpoint)
      throw new IssuerUnavailable(`the authorization server ${this.config.issuer} names no introspection endpoint; set auth.oauth.introspection.endpoint`);
    const { clientId, clientSecret } = this.config.introspection;
    try {
      const res = await this.fetchFn(endpoint, {
        method: "POST",
        redirect: "error",
        signal: AbortSignal.timeout(5_000),
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          accept: "application/json",
          authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString("base64")}`,
        },
        body: new URLSearchParams({ token, token_type_hint: "access_token" }),
      });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const body = await res.json();
      if (typeof body !== "object" || body === null) throw new Error("the answer is not a JSON object");
      return body as Record<string, unknown>;
    } catch (err) {
      throw new IssuerUnavailable(`the authorization server's introspection endpoint could not be asked: ${(err as Error).message}`);
    }
  }

  private judge(claims: Record<string, unknown>): Introspected {
    if (claims.active !== true) return { ok: false, description: "the token is not active (expired, revoked or unknown to its issuer)" };
    if (claims.iss !== undefined && claims.iss !== this.config.issuer)
      return { ok: false, description: "the token was issued by another authorization server" };
    const audiences = [claims.aud].flat();
    // a token that names no audience could be meant for any resource of the issuer: not for this hub
    if (!audiences.some((aud) => typeof aud === "string" && this.audiences().includes(aud)))
      return { ok: false, description: `the token is for another resource; this hub takes tokens for ${this.audiences().join(" or ")}` };
    if (typeof claims.exp === "number" && claims.exp + SKEW_SECONDS < this.clock.now() / 1000)
      return { ok: false, description: "the token has expired; get a new one" };
    return { ok: true, claims };
  }
}

// Access tokens as the hub checks them (the MCP authorization spec, RFC 9068 JWT access tokens):
// signed by the configured issuer with an asymmetric key from its key set, for this hub (audience),
// in their time window, naming a person. Nothing is remembered between requests, so any replica
// checks any token the same way.
import { decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from "jose";
import type { OAuthConfig } from "../../config/oauth.js";
import type { Clock } from "../../protocol/clock.js";
import { Issuer, IssuerUnavailable } from "./issuer.js";
import { Introspection } from "./introspection.js";

/** Only public-key signatures: `none` and HMAC (whose secret a public key would become) are refused by name. */
export const ALLOWED_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];
/** Tokens longer than this are refused before any parsing (a real provider's JWT is a few KiB; Node takes 16 KiB of headers in all). */
export const MAX_TOKEN_CHARS = 8 * 1024;
/** How far apart the hub's and the issuer's clocks may be. */
const CLOCK_SKEW_SECONDS = 30;
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export interface SignedIn {
  /** The person, from the configured claim. */
  person: string;
  /** The token's scopes (its `scope` string or `scp` list). */
  scopes: string[];
}

/** Why a token is refused: RFC 6750's error and a description for the person. */
export interface TokenRefusal {
  status: 401 | 503;
  error: "invalid_token" | "temporarily_unavailable";
  description: string;
}

export class TokenVerifier {
  readonly issuer: Issuer;
  private readonly introspection?: Introspection;

  constructor(
    private readonly config: OAuthConfig,
    private readonly clock: Clock,
    /** The audiences a token for this hub may carry: the configured one, else the hub's resource URIs. */
    private readonly audiences: () => string[],
  ) {
    this.issuer = new Issuer(config.issuer, clock);
    if (config.introspection) this.introspection = new Introspection({ ...config, introspection: config.introspection }, this.issuer, clock, audiences);
  }

  async verify(token: string): Promise<SignedIn | TokenRefusal> {
    const refuse = (description: string): TokenRefusal => ({ status: 401, error: "invalid_token", description });
    if (token.length > MAX_TOKEN_CHARS) return refuse(`the token is longer than ${MAX_TOKEN_CHARS} characters`);
    if (!JWT_SHAPE.test(token)) {
      if (this.introspection) return this.introspect(token);
      return refuse("the token is not a JWT access token (three base64url parts), and this hub does not introspect opaque tokens (auth.oauth.introspection)");
    }
    let alg: string | undefined;
    try {
      alg = decodeProtectedHeader(token).alg;
    } catch {
      return refuse("the token's header is not valid JSON");
    }
    if (!alg || !ALLOWED_ALGORITHMS.includes(alg))
      return refuse(`the token is signed with "${alg ?? "no algorithm"}"; this hub takes ${ALLOWED_ALGORITHMS.join(", ")}`);
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, (header, input) => this.issuer.keyFor(header, input), {
        issuer: this.config.issuer,
        audience: this.audiences(),
        algorithms: ALLOWED_ALGORITHMS,
        clockTolerance: CLOCK_SKEW_SECONDS,
        currentDate: new Date(this.clock.now()),
        requiredClaims: ["exp"],
      }));
    } catch (err) {
      if (err instanceof IssuerUnavailable) return { status: 503, error: "temporarily_unavailable", description: err.message };
      return refuse(describeFailure(err, this.audiences()));
    }
    return this.signedIn(payload);
  }

  private async introspect(token: string): Promise<SignedIn | TokenRefusal> {
    try {
      const verdict = await this.introspection!.check(token);
      return verdict.ok ? this.signedIn(verdict.claims) : { status: 401, error: "invalid_token", description: verdict.description };
    } catch (err) {
      if (err instanceof IssuerUnavailable) return { status: 503, error: "temporarily_unavailable", description: err.message };
      throw err;
    }
  }

  private signedIn(claims: JWTPayload): SignedIn | TokenRefusal {
    const person = claims[this.config.tenantClaim];
    if (typeof person !== "string" || person === "" || person.length > 1024)
      return {
        status: 401,
        error: "invalid_token",
        description: `the token has no "${this.config.tenantClaim}" claim naming its person (auth.oauth.tenantClaim)`,
      };
    return { person, scopes: scopesOf(claims) };
  }
}

function scopesOf(payload: JWTPayload): string[] {
  if (typeof payload.scope === "string") return payload.scope.split(" ").filter(Boolean);
  if (Array.isArray(payload.scp)) return payload.scp.filter((s): s is string => typeof s === "string");
  return [];
}

function describeFailure(err: unknown, audiences: string[]): string {
  if (err instanceof errors.JWTExpired) return "the token has expired; get a new one";
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === "aud") return `the token is for another resource; this hub takes tokens for ${audiences.join(" or ")}`;
    if (err.claim === "iss") return "the token was issued by another authorization server";
    if (err.claim === "nbf") return "the token is not valid yet";
    return `the token's "${err.claim}" claim is not acceptable (${err.reason})`;
  }
  if (err instanceof errors.JWKSNoMatchingKey) return "the token is signed with a key its issuer does not publish";
  if (err instanceof errors.JWSSignatureVerificationFailed) return "the token's signature does not verify";
  if (err instanceof errors.JOSEAlgNotAllowed) return "the token's algorithm is not allowed";
  return `the token is not valid (${(err as Error).message})`;
}

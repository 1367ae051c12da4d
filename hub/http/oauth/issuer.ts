// The authorization server as the hub knows it: its metadata (RFC 8414, else OpenID discovery),
// found once, and its signing keys (the metadata's jwks_uri), cached. A token signed with a key the
// cache does not hold makes the hub fetch the keys again, at most once per `refreshMs` whoever
// asks: a flood of tokens naming unknown keys costs the issuer one request per period, not one per
// token. An issuer that cannot be reached fails closed: no token is taken until its keys are known.
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTHeaderParameters, type FlattenedJWSInput } from "jose";
import type { Clock } from "../../protocol/clock.js";

/** The authorization server could not be asked (down, slow, or answering nonsense): the request gets 503. */
export class IssuerUnavailable extends Error {}

interface IssuerMetadata {
  issuer: string;
  jwks_uri?: string;
  introspection_endpoint?: string;
  [key: string]: unknown;
}

const MAX_DOCUMENT_BYTES = 256 * 1024;

export interface IssuerOptions {
  /** Least time between two fetches of the keys (or of the metadata after a failure). */
  refreshMs?: number;
  /** How long one fetch may take. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export class Issuer {
  private metadata?: IssuerMetadata;
  private keys?: ReturnType<typeof createLocalJWKSet>;
  private lastFetch = Number.NEGATIVE_INFINITY;
  private fetching?: Promise<void>;
  private lastError?: string;
  private readonly refreshMs: number;
  private readonly timeoutMs: number;
  private readonly fetchFn: typeof fetch;

  constructor(
    readonly url: string,
    private readonly clock: Clock,
    options: IssuerOptions = {},
  ) {
    this.refreshMs = options.refreshMs ?? 30_000;
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.fetchFn = options.fetch ?? fetch;
  }

  /** The issuer's introspection endpoint (RFC 7662), from its metadata (found once, like the keys). */
  async introspectionEndpoint(): Promise<string | undefined> {
    if (!this.metadata) await this.refresh().catch(() => undefined);
    if (!this.metadata) throw new IssuerUnavailable(this.lastError ?? `the authorization server ${this.url} has not answered yet`);
    return this.metadata.introspection_endpoint;
  }

  /** The key a token's header names; refreshes the set (bounded) when the key is unknown. */
  async keyFor(header: JWTHeaderParameters, token: FlattenedJWSInput): Promise<CryptoKey> {
    if (!this.keys) await this.refresh();
    try {
      return await this.keys!(header, token);
    } catch (err) {
      if (!(err instanceof errors.JWKSNoMatchingKey) || !this.mayRefresh()) throw err;
      await this.refresh();
      return this.keys!(header, token);
    }
  }

  private mayRefresh(): boolean {
    return this.clock.now() - this.lastFetch >= this.refreshMs;
  }

  /** Fetch the keys now, joining a fetch under way; within `refreshMs` of the last one, only say why it failed. */
  private refresh(): Promise<void> {
    if (!this.fetching && !this.mayRefresh()) {
      if (this.keys) return Promise.resolve();
      return Promise.reject(new IssuerUnavailable(this.lastError ?? `the authorization server ${this.url} has not answered yet`));
    }
    this.fetching ??= this.load().finally(() => {
      this.fetching = undefined;
    });
    return this.fetching;
  }

  private async load(): Promise<void> {
    this.lastFetch = this.clock.now();
    try {
      this.metadata ??= await this.discover();
      if (!this.metadata.jwks_uri) throw new Error("its metadata names no jwks_uri");
      const jwks = (await this.getJson(this.metadata.jwks_uri)) as JSONWebKeySet;
      if (!Array.isArray(jwks?.keys)) throw new Error(`${this.metadata.jwks_uri} is not a JSON Web Key Set`);
      this.keys = createLocalJWKSet(jwks);
      this.lastError = undefined;
    } catch (err) {
      this.lastError = `the authorization server ${this.url} could not be asked for its keys: ${(err as Error).message}`;
      throw new IssuerUnavailable(this.lastError);
    }
  }

  /** RFC 8414's well-known location (path inserted after the host), then OpenID Connect's (path appended). */
  private async discover(): Promise<IssuerMetadata> {
    const issuer = new URL(this.url);
    const path = issuer.pathname.replace(/\/$/, "");
    const candidates = [`${issuer.origin}/.well-known/oauth-authorization-server${path}`, `${issuer.origin}${path}/.well-known/openid-configuration`];
    const failures: string[] = [];
    for (const at of candidates) {
      try {
        const metadata = (await this.getJson(at)) as IssuerMetadata;
        // a document for another issuer would hand the hub another issuer's keys (RFC 8414 section 3.3)
        if (metadata?.issuer !== this.url) throw new Error(`it names the issuer "${String(metadata?.issuer)}", not "${this.url}"`);
        return metadata;
      } catch (err) {
        failures.push(`${at}: ${(err as Error).message}`);
      }
    }
    throw new Error(`no metadata found (${failures.join("; ")})`);
  }

  private async getJson(url: string): Promise<unknown> {
    const res = await this.fetchFn(url, { signal: AbortSignal.timeout(this.timeoutMs), redirect: "error", headers: { accept: "application/json" } });
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`HTTP ${res.status}`);
    }
    const declared = Number(res.headers.get("content-length") ?? 0);
    if (declared > MAX_DOCUMENT_BYTES) {
      await res.body?.cancel();
      throw new Error(`answer larger than ${MAX_DOCUMENT_BYTES} bytes`);
    }
    const text = await res.text();
    if (text.length > MAX_DOCUMENT_BYTES) throw new Error(`answer larger than ${MAX_DOCUMENT_BYTES} bytes`);
    return JSON.parse(text);
  }
}

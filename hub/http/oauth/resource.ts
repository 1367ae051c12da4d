// The hub as an OAuth protected resource (the MCP authorization spec): its metadata (RFC 9728) at
// /.well-known/oauth-protected-resource[/mcp | /v1/mcp], naming the authorization server, the
// resource URI and the scopes; and the WWW-Authenticate challenge of every refusal, which points a
// client at that metadata so it can discover where to sign in.
import type { OAuthConfig } from "../../config/oauth.js";
import type { Grant, ScopeShortfall } from "../../catalog/selection.js";
import { jsonRpcError } from "../../protocol/jsonrpc.js";
import type { Clock } from "../../protocol/clock.js";
import { TokenVerifier, type TokenRefusal } from "./tokens.js";

const METADATA_PATH = "/.well-known/oauth-protected-resource";
/** Where the metadata is served: for /mcp (also at the root, RFC 9728's default), and for /v1/mcp (the path behind a public URL's prefix). */
export const METADATA_PATHS = [METADATA_PATH, `${METADATA_PATH}/*`];
/** Every server, read and write. */
export const ALL_SCOPE = "agentbox";
/** Every server's read-only tools. */
export const READ_SCOPE = "agentbox:read";
export const serverScope = (server: string) => `agentbox:${server}`;

type Endpoint = "/mcp" | "/v1/mcp";
const endpointOf = (path: string): Endpoint => (path.endsWith("/v1/mcp") ? "/v1/mcp" : "/mcp");

export class ProtectedResource {
  readonly verifier: TokenVerifier;

  constructor(
    readonly config: OAuthConfig,
    /** The hub's address as clients reach it, without /mcp: AGENTBOX_PUBLIC_URL, else the address it listens on. */
    private readonly base: () => string,
    private readonly serverNames: () => string[],
    clock: Clock,
  ) {
    this.verifier = new TokenVerifier(config, clock, () => (config.audience ? [config.audience] : [this.resource("/mcp"), this.resource("/v1/mcp")]));
  }

  /** The resource URI of an endpoint: what a client names in its token request (RFC 8707), and the token's audience. */
  resource(endpoint: Endpoint): string {
    return `${this.base()}${endpoint}`;
  }

  metadataUrl(path: string): string {
    const base = new URL(this.base());
    return `${base.origin}${METADATA_PATH}${base.pathname.replace(/\/$/, "")}${endpointOf(path)}`;
  }

  scopes(): string[] {
    return [ALL_SCOPE, READ_SCOPE, ...this.serverNames().map(serverScope)];
  }

  /** What these scopes (the hub's own, at least one) allow: undefined for everything (`agentbox`). */
  grantOf(scopes: string[]): Grant | undefined {
    if (scopes.includes(ALL_SCOPE)) return undefined;
    const servers = new Set(this.serverNames().filter((server) => scopes.includes(serverScope(server))));
    return { servers, readOnly: scopes.includes(READ_SCOPE), ask: serverScope };
  }

  /** `WWW-Authenticate` for a refusal at `path`: where the metadata is, what to ask for, and what was wrong. */
  challenge(path: string, refusal?: Pick<TokenRefusal, "error" | "description"> | { error: "insufficient_scope"; description: string; scope: string }): string {
    const quoted = (text: string) => text.replace(/["\\\r\n]/g, "'");
    const params = [`resource_metadata="${this.metadataUrl(path)}"`];
    const scope = refusal && "scope" in refusal ? refusal.scope : this.config.scopes ? ALL_SCOPE : undefined;
    if (scope) params.push(`scope="${scope}"`);
    if (refusal) params.push(`error="${refusal.error}"`, `error_description="${quoted(refusal.description)}"`);
    return `Bearer ${params.join(", ")}`;
  }

  /** 403 insufficient_scope for a request at `path` that a token's scopes are too narrow for: the scope to ask for in WWW-Authenticate, the reason in the body. */
  insufficientScope(path: string, shortfall: ScopeShortfall, id?: string | number | null): Response {
    return jsonRpcError(403, -32001, `Forbidden: ${shortfall.message}`, {
      id,
      headers: { "WWW-Authenticate": this.challenge(path, { error: "insufficient_scope", description: shortfall.message, scope: shortfall.scope }) },
    });
  }

  /** The metadata served at `path` (one of METADATA_PATHS). */
  metadata(path: string) {
    const endpoint = endpointOf(path);
    return {
      resource: this.resource(endpoint),
      authorization_servers: [this.config.issuer],
      scopes_supported: this.config.scopes ? this.scopes() : undefined,
      bearer_methods_supported: ["header"],
      resource_name: "agentbox",
    };
  }
}

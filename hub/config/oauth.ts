// Sign-in with OAuth: the hub as an OAuth resource server (the MCP authorization spec). People
// present access tokens of one authorization server; each person (a token's subject) is a tenant of
// their own, created on first sign-in. From the file's `auth.oauth` and AGENTBOX_OAUTH_*.
import { isIP } from "node:net";
import { ConfigError, type ConfigFile } from "./schema.js";
import { positiveInt } from "./env.js";

export interface OAuthConfig {
  /** The authorization server's issuer URL: tokens must name it, and its metadata names its keys. */
  issuer: string;
  /** The `aud` tokens must carry; unset: the hub's own resource URI (its public URL + /mcp). */
  audience?: string;
  /** The claim that names the person (and so the tenant). */
  tenantClaim: string;
  /** Whether a token's scopes narrow what it may do (agentbox, agentbox:<server>, agentbox:read). */
  scopes: boolean;
  /** How many people may have a tenant at once: a flood of new subjects meets this bound. */
  maxTenants: number;
  /** How long a person's tenant is kept with no session and no request before its servers stop and its slot is freed (its uid and files stay). */
  idleMs: number;
  /** Opaque tokens are asked about at the issuer's introspection endpoint (RFC 7662) with these client credentials. */
  introspection?: { clientId: string; clientSecret: string; endpoint?: string };
}

const LOOPBACK = (host: string) => host === "localhost" || host.startsWith("127.") || host === "[::1]";

/** An issuer is an https URL (http only on loopback, for a server on this machine) with no query or fragment. */
function issuerUrl(value: string, where: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${where} must be the authorization server's issuer URL, such as https://id.example.com/realms/agents, got "${value}"`);
  }
  const loopback = LOOPBACK(url.hostname) && (url.hostname === "localhost" || isIP(url.hostname.replace(/^\[|\]$/g, "")) !== 0);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback))
    throw new ConfigError(`${where} must be an https URL (http only on a loopback address), got "${value}"`);
  if (url.search || url.hash || url.username || url.password) throw new ConfigError(`${where} takes no query, fragment or credentials, got "${value}"`);
  return value;
}

function flag(value: string | undefined, where: string): boolean | undefined {
  if (value === undefined || value === "") return undefined;
  const v = value.toLowerCase();
  if (["1", "true", "on", "yes"].includes(v)) return true;
  if (["0", "false", "off", "no"].includes(v)) return false;
  throw new ConfigError(`${where} is on or off, got "${value}"`);
}

export function oauthFromEnv(env: NodeJS.ProcessEnv, file: ConfigFile): OAuthConfig | undefined {
  const fromFile = file.auth?.oauth;
  const issuer = env.AGENTBOX_OAUTH_ISSUER || fromFile?.issuer;
  if (!issuer) return undefined;
  return {
    issuer: issuerUrl(issuer, env.AGENTBOX_OAUTH_ISSUER ? "AGENTBOX_OAUTH_ISSUER" : "auth.oauth.issuer"),
    audience: env.AGENTBOX_OAUTH_AUDIENCE || fromFile?.audience || undefined,
    tenantClaim: env.AGENTBOX_OAUTH_TENANT_CLAIM || fromFile?.tenantClaim || "sub",
    scopes: flag(env.AGENTBOX_OAUTH_SCOPES, "AGENTBOX_OAUTH_SCOPES") ?? fromFile?.scopes ?? true,
    maxTenants: positiveInt(env.AGENTBOX_OAUTH_MAX_TENANTS, "AGENTBOX_OAUTH_MAX_TENANTS") ?? fromFile?.maxTenants ?? 32,
    idleMs: (positiveInt(env.AGENTBOX_OAUTH_IDLE_SECONDS, "AGENTBOX_OAUTH_IDLE_SECONDS") ?? fromFile?.idleSeconds ?? 30 * 60) * 1000,
    introspection: introspectionOf(env, fromFile?.introspection),
  };
}

function introspectionOf(env: NodeJS.ProcessEnv, fromFile: OAuthConfig["introspection"]): OAuthConfig["introspection"] {
  const clientId = env.AGENTBOX_OAUTH_INTROSPECTION_CLIENT_ID || fromFile?.clientId;
  const clientSecret = env.AGENTBOX_OAUTH_INTROSPECTION_CLIENT_SECRET || fromFile?.clientSecret;
  if (!clientId && !clientSecret) return undefined;
  if (!clientId || !clientSecret)
    throw new ConfigError(
      "Introspection needs both a client id and its secret (AGENTBOX_OAUTH_INTROSPECTION_CLIENT_ID and _CLIENT_SECRET, or auth.oauth.introspection).",
    );
  return { clientId, clientSecret, endpoint: fromFile?.endpoint };
}

// Previews of apps an agent started (hub/previews/): the address people open them by, the optional
// wildcard domain of the subdomain form, how long a preview lives and how many a tenant may hold.
import { ConfigError } from "./schema.js";
import { positiveInt } from "./env.js";

export interface PreviewConfig {
  /** The hub's address as people's browsers reach it (AGENTBOX_PUBLIC_URL); else the address of the MCP request that asked. */
  publicUrl?: string;
  /** A wildcard domain whose names reach the hub (AGENTBOX_PREVIEW_DOMAIN): previews also get `<port>-<token>.<domain>`. */
  domain?: string;
  /** A preview's life when the agent names none (AGENTBOX_PREVIEW_TTL_SECONDS). */
  ttlSeconds: number;
  /** The longest life an agent may ask for (AGENTBOX_PREVIEW_MAX_TTL_SECONDS). */
  maxTtlSeconds: number;
  /** Open previews per tenant (AGENTBOX_PREVIEWS_PER_TENANT). */
  perTenant: number;
}

// a host name: DNS labels joined by dots ("preview.example.com", "localhost")
const DOMAIN = /^(?=.{1,200}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

function publicUrl(value: string | undefined): string | undefined {
  if (!value) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`AGENTBOX_PUBLIC_URL must be an http(s) URL such as https://agents.example.com, got "${value}"`);
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.search || url.hash || url.username || url.password) {
    throw new ConfigError(`AGENTBOX_PUBLIC_URL must be a plain http(s) URL (no query, fragment or credentials), got "${value}"`);
  }
  return url.href.replace(/\/$/, "");
}

function domain(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const name = value.toLowerCase().replace(/^\*\./, "").replace(/\.$/, "");
  if (!DOMAIN.test(name)) throw new ConfigError(`AGENTBOX_PREVIEW_DOMAIN must be a domain name such as preview.example.com or localhost, got "${value}"`);
  return name;
}

export function previewsFromEnv(env: NodeJS.ProcessEnv): PreviewConfig {
  const ttlSeconds = positiveInt(env.AGENTBOX_PREVIEW_TTL_SECONDS, "AGENTBOX_PREVIEW_TTL_SECONDS") ?? 3600;
  const maxTtlSeconds = positiveInt(env.AGENTBOX_PREVIEW_MAX_TTL_SECONDS, "AGENTBOX_PREVIEW_MAX_TTL_SECONDS") ?? 86_400;
  if (ttlSeconds > maxTtlSeconds) {
    throw new ConfigError(`AGENTBOX_PREVIEW_TTL_SECONDS (${ttlSeconds}) must not exceed AGENTBOX_PREVIEW_MAX_TTL_SECONDS (${maxTtlSeconds})`);
  }
  return {
    publicUrl: publicUrl(env.AGENTBOX_PUBLIC_URL),
    domain: domain(env.AGENTBOX_PREVIEW_DOMAIN),
    ttlSeconds,
    maxTtlSeconds,
    perTenant: positiveInt(env.AGENTBOX_PREVIEWS_PER_TENANT, "AGENTBOX_PREVIEWS_PER_TENANT") ?? 16,
  };
}

// A real OAuth 2.1 / OpenID Connect authorization server for tests (oidc-provider) on loopback:
// client credentials, authorization code with PKCE, dynamic registration, resource indicators
// (RFC 8707) issuing JWT access tokens for the resource asked for. Its signing key is made here,
// so tests can also sign the tokens an attacker would forge, and it counts requests per path so
// tests can see how often the hub fetched its keys.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import Provider, { type ProviderContext } from "oidc-provider";

export const PROVIDER_SCOPES = ["agentbox", "agentbox:read", "agentbox:terminal", "agentbox:file", "agentbox:code", "agentbox:browser"];

export interface TestProvider {
  issuer: string;
  /** The signing key (private), so a test can forge tokens the provider could have issued. */
  privateKey: CryptoKey;
  /** Its public JWK, as published at jwks_uri. */
  publicJwk: JWK;
  kid: string;
  /** Requests seen per path (e.g. "/jwks"). */
  hits: Map<string, number>;
  /** A confidential client registered now (dynamic registration): its id and secret. */
  registerClient(clientId: string): Promise<{ id: string; secret: string }>;
  /** A public client of a host (authorization code with PKCE) allowed every scope, registered now: its id. */
  registerHost(redirectUri: string): Promise<string>;
  /** A client-credentials token for `clientId` (registered on first use) for `resource`, with `scope`. */
  clientToken(clientId: string, resource: string, scope?: string): Promise<string>;
  stop(): Promise<void>;
}

/** `opaque`: access tokens are opaque strings, known only to the provider's introspection endpoint (RFC 7662). */
export async function startProvider(options: { opaque?: boolean } = {}): Promise<TestProvider> {
  const hits = new Map<string, number>();
  let handler: http.RequestListener = (_req, res) => res.end();
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kid = "provider-key-1";
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: "ES256", use: "sig" };
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: "ES256", use: "sig" };
  const secrets = new Map<string, string>();
  const clients: Array<Record<string, unknown>> = [];
  const provider = new Provider(issuer, {
    clients,
    jwks: { keys: [privateJwk] },
    scopes: ["openid", "offline_access", ...PROVIDER_SCOPES],
    clientDefaults: { id_token_signed_response_alg: "ES256", grant_types: ["authorization_code", "refresh_token"], response_types: ["code"] },
    findAccount: (_ctx: ProviderContext, id: string) => ({ accountId: id, claims: () => ({ sub: id }) }),
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx: ProviderContext, _client: unknown, oneOf?: string) => oneOf ?? "urn:agentbox:none",
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: ProviderContext, resource: string) => ({
          scope: PROVIDER_SCOPES.join(" "),
          audience: resource,
          accessTokenTTL: 600,
          accessTokenFormat: options.opaque ? "opaque" : "jwt",
          jwt: { sign: { alg: "ES256" } },
        }),
      },
    },
    pkce: { required: () => true },
  });
  handler = provider.callback();
  const register = async (clientId: string) => {
    if (secrets.has(clientId)) return secrets.get(clientId)!;
    const secret = `${clientId}-secret-0123456789abcdef`;
    // registered through the provider's own registration endpoint: the same path a real client takes
    const res = await fetch(`${issuer}/reg`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_id: clientId,
        client_secret: secret,
        grant_types: ["client_credentials"],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: "client_secret_basic",
        scope: PROVIDER_SCOPES.join(" "),
      }),
    });
    const body = (await res.json()) as { client_id?: string; client_secret?: string };
    if (!res.ok || !body.client_id) throw new Error(`registration failed: ${res.status} ${JSON.stringify(body)}`);
    secrets.set(clientId, `${body.client_id}\0${body.client_secret}`);
    return secrets.get(clientId)!;
  };
  return {
    issuer,
    privateKey,
    publicJwk,
    kid,
    hits,
    async registerClient(clientId) {
      const [id, secret] = (await register(clientId)).split("\0");
      return { id, secret };
    },
    async registerHost(redirectUri) {
      const res = await fetch(`${issuer}/reg`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          client_name: "agentbox test host",
          grant_types: ["authorization_code", "refresh_token"],
          response_types: ["code"],
          redirect_uris: [redirectUri],
          token_endpoint_auth_method: "none",
          scope: ["openid", "offline_access", ...PROVIDER_SCOPES].join(" "),
        }),
      });
      const body = (await res.json()) as { client_id?: string };
      if (!res.ok || !body.client_id) throw new Error(`registration failed: ${res.status} ${JSON.stringify(body)}`);
      return body.client_id;
    },
    async clientToken(clientId, resource, scope = "agentbox") {
      const [id, secret] = (await register(clientId)).split("\0");
      const res = await fetch(`${issuer}/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}` },
        body: new URLSearchParams({ grant_type: "client_credentials", resource, scope }),
      });
      const body = (await res.json()) as { access_token?: string };
      if (!res.ok || !body.access_token) throw new Error(`token request failed: ${res.status} ${JSON.stringify(body)}`);
      return body.access_token;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

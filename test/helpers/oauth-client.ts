// The SDK v2 client's own OAuth support, as a host uses it: an in-memory OAuthClientProvider
// (dynamic registration, PKCE, tokens), and a person signing in at the test's authorization server
// (oidc-provider's login and consent pages) driven with plain HTTP, cookies and all.
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthClientProvider, OAuthDiscoveryState, OAuthTokens } from "@modelcontextprotocol/client";

export class MemoryOAuthProvider implements OAuthClientProvider {
  private client?: OAuthClientInformationMixed;
  private saved?: OAuthTokens;
  private verifier = "";
  private discovery?: OAuthDiscoveryState;
  /** Where the client sent the person to sign in, last. */
  authorizationUrl?: URL;

  /** `registered`: a client the host registered beforehand (else the SDK registers one, for the scopes of its first request only). */
  constructor(
    readonly redirectUrl: string,
    private readonly scope?: string,
    registered?: OAuthClientInformationMixed,
  ) {
    this.client = registered;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "agentbox test host",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      ...(this.scope ? { scope: this.scope } : {}),
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  discoveryState() {
    return this.discovery;
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
}

/**
 * A person signing in as `login` at oidc-provider's interaction pages, consenting to what is asked:
 * follows the redirects from the authorization URL to the client's redirect URL, and returns it
 * (with `code`, `state` and `iss`).
 */
export async function signInAs(authorizationUrl: URL, login: string, redirectUrl: string): Promise<URL> {
  const cookies = new Map<string, string>();
  const send = async (url: URL, init: RequestInit = {}) => {
    const res = await fetch(url, {
      ...init,
      redirect: "manual",
      headers: { ...(init.headers as Record<string, string>), cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; ") },
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair.indexOf("=");
      cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1));
    }
    return res;
  };
  let url = authorizationUrl;
  let res = await send(url);
  for (let step = 0; step < 20; step++) {
    const location = res.headers.get("location");
    if (location) {
      url = new URL(location, url);
      if (url.href.startsWith(redirectUrl)) return url;
      res = await send(url);
      continue;
    }
    const page = await res.text();
    const prompt = /name="prompt" value="(login|consent)"/.exec(page)?.[1];
    const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
    if (!prompt || !action) throw new Error(`sign-in stopped at ${url.href} (${res.status}): ${page.slice(0, 300)}`);
    const form = new URLSearchParams(prompt === "login" ? { prompt, login, password: "any" } : { prompt });
    res = await send(new URL(action.replace(/&amp;/g, "&"), url), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form,
    });
  }
  throw new Error("sign-in took more than 20 steps");
}

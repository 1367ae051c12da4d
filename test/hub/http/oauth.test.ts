// Sign-in with OAuth against a real authorization server (oidc-provider on loopback): the hub's
// protected resource metadata and challenges, tokens checked against the issuer's keys, each
// person a tenant of their own under their own uid, and every forged or misdirected token refused
// without the hub fetching keys more often than its rate allows.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { base64url, generateKeyPair, SignJWT, exportJWK } from "jose";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import fs from "node:fs";
import { call, startHub, tempDir, textOf, type TestHub } from "../../helpers/hub.js";
import { startProvider, type TestProvider } from "../../helpers/oidc.js";
import { envelope } from "../modern/modern-client.js";

const asRoot = process.getuid?.() === 0;
const skip = asRoot ? false : "needs root: people get uids of their own only when the hub can switch users";
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
};
const MODERN_LIST = { jsonrpc: "2.0", id: 2, method: "tools/list", params: { _meta: envelope() } };

async function postMcp(hub: TestHub, body: unknown, headers: Record<string, string> = {}, path = "/mcp") {
  const modern = (body as { params?: { _meta?: unknown } }).params?._meta !== undefined;
  return fetch(hub.origin + path, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      ...(modern ? { "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list" } : {}),
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

const challengeOf = (res: Response) => res.headers.get("www-authenticate") ?? "";

describe("sign-in with OAuth", { skip }, () => {
  let provider: TestProvider;
  let hub: TestHub;
  let resource: string;
  const clients: Client[] = [];

  const connect = async (token: string) => {
    const client = await hub.connect({ headers: bearer(token) });
    clients.push(client);
    return client;
  };
  const sh = async (client: Client, command: string) => textOf(await call(client, "terminal_exec", { command, timeoutMs: 60_000 }));
  /** A token signed with the provider's own key: what it could have issued, with these claims. */
  const forge = (claims: Record<string, unknown>, header: Record<string, unknown> = {}) =>
    new SignJWT({ iss: provider.issuer, aud: resource, sub: "mallory", scope: "agentbox", ...claims })
      .setProtectedHeader({ alg: "ES256", kid: provider.kid, typ: "at+jwt", ...header })
      .setIssuedAt()
      .setExpirationTime(typeof claims.exp === "number" ? claims.exp : "10m")
      .sign(provider.privateKey);

  before(async () => {
    provider = await startProvider();
    hub = await startHub({
      servers: ["terminal", "file"],
      env: { AGENTBOX_OAUTH_ISSUER: provider.issuer, AGENTBOX_OAUTH_MAX_TENANTS: "3" },
    });
    resource = hub.url;
  });
  after(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await hub?.stop();
    await provider?.stop();
  });

  test("the protected resource metadata names the issuer, the resource and the scopes, for /mcp and /v1/mcp", async () => {
    for (const [path, expected] of [
      ["/.well-known/oauth-protected-resource", resource],
      ["/.well-known/oauth-protected-resource/mcp", resource],
      ["/.well-known/oauth-protected-resource/v1/mcp", `${hub.origin}/v1/mcp`],
    ]) {
      const res = await fetch(hub.origin + path);
      assert.equal(res.status, 200, path);
      const body = await res.json();
      assert.equal(body.resource, expected, path);
      assert.deepEqual(body.authorization_servers, [provider.issuer]);
      for (const scope of ["agentbox", "agentbox:read", "agentbox:terminal", "agentbox:file"]) assert.ok(body.scopes_supported.includes(scope), scope);
    }
  });

  test("without a token both eras get 401 naming the metadata in WWW-Authenticate", async () => {
    for (const [body, path] of [
      [INIT, "/mcp"],
      [MODERN_LIST, "/mcp"],
      [INIT, "/v1/mcp"],
    ] as const) {
      const res = await postMcp(hub, body, {}, path);
      assert.equal(res.status, 401);
      const challenge = challengeOf(res);
      assert.match(challenge, /^Bearer /);
      assert.ok(challenge.includes(`resource_metadata="${hub.origin}/.well-known/oauth-protected-resource${path}"`), challenge);
      assert.match(challenge, /scope="agentbox"/);
    }
  });

  test("two people get two tenants: their own uids, files and processes", async () => {
    const alice = await connect(await provider.clientToken("alice", resource));
    // one person signed in on a hub without keys: a request without a token is still nobody's
    assert.equal((await postMcp(hub, INIT)).status, 401);
    const bob = await connect(await provider.clientToken("bob", resource));
    const uidA = (await sh(alice, "id -u")).match(/--- stdout ---\n(\d+)/)?.[1];
    const uidB = (await sh(bob, "id -u")).match(/--- stdout ---\n(\d+)/)?.[1];
    assert.ok(uidA && uidB, "both ran a command");
    assert.notEqual(uidA, uidB);
    assert.notEqual(uidA, "0");
    assert.notEqual(uidB, "0");
    await call(alice, "file_write", { path: "diary.txt", content: "alice's secret" });
    const read = await call(bob, "file_read", { path: "diary.txt" });
    assert.equal(read.isError, true, "bob's workspace has no diary.txt");
    const peek = await sh(bob, "cat ../*/diary.txt 2>&1; ls .. 2>&1; echo done");
    assert.doesNotMatch(peek, /alice's secret/);
    // a process of alice's is out of bob's reach
    await sh(alice, "sleep 300 >/dev/null 2>&1 & echo started");
    const kill = await sh(bob, `pkill -u ${uidA} sleep; echo "exit $?"`);
    assert.doesNotMatch(kill, /exit 0/);
    // the same person again is the same tenant
    const alice2 = await connect(await provider.clientToken("alice", resource));
    assert.match(await sh(alice2, "id -u"), new RegExp(`--- stdout ---\\n${uidA}\\n`));
  });

  test("a token for another resource is refused", async () => {
    const token = await provider.clientToken("alice", "https://other.example.com/mcp");
    const res = await postMcp(hub, INIT, bearer(token));
    assert.equal(res.status, 401);
    assert.match(challengeOf(res), /error="invalid_token"/);
    assert.match((await res.json()).error.message, /another resource/);
  });

  test("forged, expired, misdirected and malformed tokens are each refused with 401 invalid_token", async () => {
    const now = Math.floor(Date.now() / 1000);
    const header = base64url.encode(JSON.stringify({ alg: "none", typ: "JWT" }));
    const payload = base64url.encode(JSON.stringify({ iss: provider.issuer, aud: resource, sub: "mallory", exp: now + 600, scope: "agentbox" }));
    const hsHeader = base64url.encode(JSON.stringify({ alg: "HS256", kid: provider.kid }));
    const hsSigned = await new SignJWT({ iss: provider.issuer, aud: resource, sub: "mallory", scope: "agentbox" })
      .setProtectedHeader({ alg: "HS256", kid: provider.kid })
      .setExpirationTime("10m")
      .sign(new TextEncoder().encode(JSON.stringify(provider.publicJwk)));
    const cases: Array<[string, string, RegExp]> = [
      ["malformed", "not-a-token", /not a JWT/],
      ["oversized", "a".repeat(10_000), /longer than/],
      ["garbage header", `${base64url.encode("{{{")}.${payload}.sig`, /header/],
      ["alg none", `${header}.${payload}.`, /"none"/],
      ["HS256 keyed with the public key", hsSigned, /"HS256"/],
      ["HS256 header, ES256 signature", `${hsHeader}.${payload}.${(await forge({})).split(".")[2]}`, /"HS256"/],
      ["expired", await forge({ exp: now - 3600 }), /expired/],
      ["not yet valid", await forge({ nbf: now + 3600 }), /not valid yet/],
      ["another issuer", await forge({ iss: "http://127.0.0.1:1/evil" }), /another authorization server/],
      ["another audience", await forge({ aud: "https://other.example.com/mcp" }), /another resource/],
      ["no subject", await forge({ sub: undefined }), /"sub"/],
      ["tampered payload", (await forge({})).replace(/\.[^.]+\./, `.${payload}.`), /signature/],
    ];
    for (const [what, token, message] of cases) {
      const res = await postMcp(hub, INIT, bearer(token));
      assert.equal(res.status, 401, what);
      assert.match(challengeOf(res), /error="invalid_token"/, what);
      assert.match((await res.json()).error.message, message, what);
    }
  });

  test("a flood of tokens naming unknown keys makes the hub fetch the issuer's keys at most once more", async () => {
    await postMcp(hub, INIT, bearer(await forge({ sub: "alice" }))); // keys known
    const before = provider.hits.get("/jwks") ?? 0;
    const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
    assert.ok(await exportJWK(publicKey));
    for (let i = 0; i < 40; i++) {
      const token = await new SignJWT({ iss: provider.issuer, aud: resource, sub: "mallory", scope: "agentbox" })
        .setProtectedHeader({ alg: "ES256", kid: `unknown-${i}` })
        .setExpirationTime("10m")
        .sign(privateKey);
      const res = await postMcp(hub, INIT, bearer(token));
      assert.equal(res.status, 401);
    }
    assert.ok((provider.hits.get("/jwks") ?? 0) <= before + 1, `the hub fetched the keys ${(provider.hits.get("/jwks") ?? 0) - before} times`);
    // and it keeps serving real tokens
    const ok = await postMcp(hub, INIT, bearer(await provider.clientToken("alice", resource)));
    assert.equal(ok.status, 200);
  });

  test("a token with none of the hub's scopes gets 403 insufficient_scope naming the scope to ask for", async () => {
    const res = await postMcp(hub, INIT, bearer(await forge({ sub: "alice", scope: "openid profile" })));
    assert.equal(res.status, 403);
    assert.match(challengeOf(res), /error="insufficient_scope"/);
    assert.match(challengeOf(res), /scope="agentbox"/);
  });

  /** A 403 naming the scope to ask for, as the MCP authorization spec's scope challenge has it. */
  const assertStepUp = async (res: Response, scope: string) => {
    const text = await res.text();
    assert.equal(res.status, 403, text);
    const challenge = challengeOf(res);
    assert.match(challenge, /error="insufficient_scope"/);
    assert.match(challenge, new RegExp(`scope="${scope}"`));
    assert.match(challenge, new RegExp(`resource_metadata="${hub.origin}/.well-known/oauth-protected-resource/mcp"`));
    assert.match(JSON.parse(text).error.message, new RegExp(`sign in again asking for the scope ${scope}`));
  };
  const WRITE = (id: number, meta?: object) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "file_write", arguments: { path: "notes.txt", content: "overwritten" }, ...(meta ? { _meta: meta } : {}) },
  });

  test("a read-only token sees and calls only read-only tools; a write gets 403 insufficient_scope naming the scope, in either era", async () => {
    const writer = await connect(await provider.clientToken("alice", resource));
    await call(writer, "file_write", { path: "notes.txt", content: "v1" });
    const token = await provider.clientToken("alice", resource, "agentbox:read");
    const reader = await connect(token);
    const names = (await reader.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes("file_read"), names.join());
    assert.ok(!names.includes("file_write") && !names.includes("terminal_exec"), names.join());
    assert.equal(textOf(await call(reader, "file_read", { path: "notes.txt" })).includes("v1"), true);
    // a 2025 session: the call on its session id, SSE accepted, is refused before any stream starts
    const init = await postMcp(hub, INIT, bearer(token));
    const sessionId = init.headers.get("mcp-session-id")!;
    await init.body?.cancel();
    await assertStepUp(await postMcp(hub, WRITE(2), { ...bearer(token), "Mcp-Session-Id": sessionId, "MCP-Protocol-Version": "2025-11-25" }), "agentbox:file");
    // 2026-07-28, sessionless
    const modern = { ...bearer(token), "Mcp-Method": "tools/call", "Mcp-Name": "file_write" };
    await assertStepUp(await postMcp(hub, WRITE(3, envelope()), modern), "agentbox:file");
    // plain JSON, sessionless
    await assertStepUp(await postMcp(hub, WRITE(4), bearer(token)), "agentbox:file");
    // a batch is answered message by message: the refusal stays an MCP error, the other message is served
    const batch = await postMcp(hub, [WRITE(5), { jsonrpc: "2.0", id: 6, method: "tools/list" }], { ...bearer(token), Accept: "application/json" });
    assert.equal(batch.status, 200);
    const replies = (await batch.json()) as Array<{ id: number; result?: { isError?: boolean; content?: Array<{ text: string }>; tools?: unknown[] } }>;
    const refusal = replies.find((r) => r.id === 5)!;
    assert.equal(refusal.result?.isError, true);
    assert.match(refusal.result!.content![0].text, /sign in again asking for the scope agentbox:file/);
    assert.ok(replies.find((r) => r.id === 6)?.result?.tools);
    assert.match(textOf(await call(writer, "file_read", { path: "notes.txt" })), /v1/);
  });

  test("a session follows its person's latest token: the same session id with a wider token may write", async () => {
    const narrow = await provider.clientToken("alice", resource, "agentbox:read");
    const init = await postMcp(hub, INIT, bearer(narrow));
    const sessionId = init.headers.get("mcp-session-id")!;
    await init.body?.cancel();
    const onSession = (token: string) => ({ ...bearer(token), "Mcp-Session-Id": sessionId, Accept: "application/json" });
    await assertStepUp(await postMcp(hub, WRITE(2), onSession(narrow)), "agentbox:file");
    const wide = await provider.clientToken("alice", resource, "agentbox:read agentbox:file");
    const written = await postMcp(hub, WRITE(3), onSession(wide));
    assert.equal(written.status, 200);
    assert.notEqual((await written.json()).result?.isError, true);
    // and narrower again: the wider token's view does not stay with the session
    await assertStepUp(await postMcp(hub, WRITE(4), onSession(narrow)), "agentbox:file");
  });

  test("a token with one server's scope sees that server alone", async () => {
    const client = await connect(await provider.clientToken("alice", resource, "agentbox:terminal"));
    const names = (await client.listTools()).tools.map((t) => t.name).filter((n) => !n.startsWith("hub_"));
    assert.ok(names.length > 0 && names.every((n) => n.startsWith("terminal_")), names.join());
  });

  test("people beyond the configured bound get no tenant; those who have one keep it", async () => {
    await postMcp(hub, INIT, bearer(await provider.clientToken("carol", resource)));
    const dave = await postMcp(hub, INIT, bearer(await provider.clientToken("dave", resource)));
    assert.equal(dave.status, 503);
    assert.match((await dave.json()).error.message, /as many people as it may \(3/);
    const alice = await postMcp(hub, INIT, bearer(await provider.clientToken("alice", resource)));
    assert.equal(alice.status, 200);
  });
});

describe("sign-in with OAuth when the authorization server is down", { skip }, () => {
  let hub: TestHub;
  before(async () => {
    // a loopback port nobody listens on
    hub = await startHub({ servers: ["file"], env: { AGENTBOX_OAUTH_ISSUER: "http://127.0.0.1:9" } });
  });
  after(() => hub?.stop());

  test("tokens are refused with 503 saying the issuer cannot be asked, and the hub keeps serving", async () => {
    const token = `${base64url.encode(JSON.stringify({ alg: "ES256", kid: "k" }))}.${base64url.encode(JSON.stringify({ sub: "x" }))}.c2ln`;
    const res = await postMcp(hub, INIT, bearer(token));
    assert.equal(res.status, 503);
    assert.match((await res.json()).error.message, /could not be asked for its keys/);
    const again = await postMcp(hub, INIT, bearer(token));
    assert.equal(again.status, 503);
    assert.equal((await fetch(hub.origin + "/healthz")).status, 200);
  });
});

describe("API keys beside OAuth", { skip }, () => {
  let provider: TestProvider;
  let hub: TestHub;
  before(async () => {
    provider = await startProvider();
    hub = await startHub({ servers: ["file"], env: { AGENTBOX_OAUTH_ISSUER: provider.issuer, AGENTBOX_API_KEY: "operator-key-0123456789abcdef" } });
  });
  after(async () => {
    await hub?.stop();
    await provider?.stop();
  });

  test("the API key still opens the hub, and so does a person's token", async () => {
    assert.equal((await postMcp(hub, INIT, bearer("operator-key-0123456789abcdef"))).status, 200);
    assert.equal((await postMcp(hub, INIT, bearer(await provider.clientToken("erin", hub.url)))).status, 200);
    const wrong = await postMcp(hub, INIT, { "X-API-Key": "wrong" });
    assert.equal(wrong.status, 401);
    assert.match(challengeOf(wrong), /resource_metadata=/);
  });
});

describe("sign-in with opaque tokens, asked about by introspection (RFC 7662)", { skip }, () => {
  let provider: TestProvider;
  let hub: TestHub;
  let hubSecret = "";
  before(async () => {
    provider = await startProvider({ opaque: true });
    const { id, secret } = await provider.registerClient("agentbox-hub");
    hubSecret = secret;
    hub = await startHub({
      servers: ["terminal"],
      env: {
        AGENTBOX_OAUTH_ISSUER: provider.issuer,
        AGENTBOX_OAUTH_INTROSPECTION_CLIENT_ID: id,
        AGENTBOX_OAUTH_INTROSPECTION_CLIENT_SECRET: secret,
        // the provider's introspection names a client-credentials token's client, not a subject
        AGENTBOX_OAUTH_TENANT_CLAIM: "client_id",
      },
    });
  });
  after(async () => {
    await hub?.stop();
    await provider?.stop();
  });

  test("an active token for this hub opens it, asked about once however often it is used", async () => {
    const token = await provider.clientToken("frank", hub.url);
    assert.doesNotMatch(token, /\./, "the provider issues opaque tokens here");
    const before = provider.hits.get("/token/introspection") ?? 0;
    for (let i = 0; i < 3; i++) assert.equal((await postMcp(hub, INIT, bearer(token))).status, 200);
    assert.equal((provider.hits.get("/token/introspection") ?? 0) - before, 1);
  });

  test("a token for another resource, and one the issuer does not know, are refused", async () => {
    const other = await postMcp(hub, INIT, bearer(await provider.clientToken("frank", "https://other.example.com/mcp")));
    assert.equal(other.status, 401);
    assert.match((await other.json()).error.message, /another resource/);
    const unknown = await postMcp(hub, INIT, bearer("made-up-opaque-token-0123456789"));
    assert.equal(unknown.status, 401);
    assert.match((await unknown.json()).error.message, /not active/);
  });

  test("the introspection secret reaches no tenant's processes", async () => {
    const client = await hub.connect({ headers: bearer(await provider.clientToken("frank", hub.url)) });
    const env = textOf(await call(client, "terminal_exec", { command: "env; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'" }));
    assert.match(env, /AGENTBOX_WORKSPACE=/, "the command ran");
    assert.ok(!env.includes(hubSecret), "the secret's value is nowhere in the tenant's environment");
    assert.doesNotMatch(env, /INTROSPECTION_CLIENT_SECRET/);
    await client.close();
  });
});

describe("a person's tenant across a restart of the hub", { skip }, () => {
  let provider: TestProvider;
  const workspace = tempDir("agentbox-ws-");
  before(async () => {
    provider = await startProvider();
  });
  after(async () => {
    await provider?.stop();
    fs.rmSync(workspace, { recursive: true, force: true });
  });

  test("keeps the uid that owns its files, so they stay its own", async () => {
    const uidIn = async () => {
      const hub = await startHub({ servers: ["terminal"], workspace, env: { AGENTBOX_OAUTH_ISSUER: provider.issuer } });
      try {
        const client = await hub.connect({ headers: bearer(await provider.clientToken("heidi", hub.url)) });
        const text = textOf(await call(client, "terminal_exec", { command: "echo kept >> mine.txt; id -u; cat mine.txt" }));
        await client.close();
        return text;
      } finally {
        await hub.stop();
      }
    };
    const first = (await uidIn()).match(/--- stdout ---\n(\d+)/)?.[1];
    const second = await uidIn();
    assert.ok(first);
    assert.match(second, new RegExp(`--- stdout ---\\n${first}\\nkept\\nkept\\n`));
  });
});

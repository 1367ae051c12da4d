// A real host's whole sign-in: the SDK v2 client meets the hub's 401, discovers the authorization
// server from the protected resource metadata, registers itself (dynamic registration), sends the
// person to sign in (authorization code with PKCE, resource indicator), and then calls
// terminal_exec as that person's tenant.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Client, StreamableHTTPClientTransport, UnauthorizedError, type CallToolResult } from "@modelcontextprotocol/client";
import { startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { startProvider, type TestProvider } from "../../helpers/oidc.js";
import { MemoryOAuthProvider, signInAs } from "../../helpers/oauth-client.js";

const asRoot = process.getuid?.() === 0;
const skip = asRoot ? false : "needs root: people get uids of their own only when the hub can switch users";
// never listened on: the client only reads the code off the URL it is sent to
const REDIRECT = "http://127.0.0.1:1/callback";

describe("the SDK v2 client signs in with OAuth and calls a tool", { skip }, () => {
  let provider: TestProvider;
  let hub: TestHub;
  const clients: Client[] = [];

  before(async () => {
    provider = await startProvider();
    hub = await startHub({ servers: ["terminal", "file"], env: { AGENTBOX_OAUTH_ISSUER: provider.issuer } });
  });
  after(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await hub?.stop();
    await provider?.stop();
  });

  /**
   * What a host does for a person: connect, sign in when told to, connect again. `grants`: the
   * scopes the person consents to, when fewer than the client asks for.
   */
  async function signedInClient(
    login: string,
    pin?: string,
    grants?: string,
  ): Promise<{ client: Client; auth: MemoryOAuthProvider; transport: StreamableHTTPClientTransport }> {
    // a host that asks for other scopes later is registered for them all (a dynamically registered client may ask only for those of its registration)
    const auth = new MemoryOAuthProvider(REDIRECT, undefined, grants ? { client_id: await provider.registerHost(REDIRECT) } : undefined);
    const options = pin ? { versionNegotiation: { mode: { pin } } } : {};
    const first = new Client({ name: "host", version: "1.0.0" }, options);
    const transport = new StreamableHTTPClientTransport(new URL(hub.url), { authProvider: auth });
    await assert.rejects(first.connect(transport), UnauthorizedError);
    assert.ok(auth.authorizationUrl, "the client sent the person to sign in");
    assert.equal(auth.authorizationUrl.origin, provider.issuer, "at the issuer the hub's metadata names");
    assert.equal(auth.authorizationUrl.searchParams.get("resource"), hub.url, "for the hub's resource URI (RFC 8707)");
    assert.equal(auth.authorizationUrl.searchParams.get("code_challenge_method"), "S256");
    if (grants) auth.authorizationUrl.searchParams.set("scope", grants);
    const callback = await signInAs(auth.authorizationUrl, login, REDIRECT);
    await transport.finishAuth(callback.searchParams);
    const client = new Client({ name: "host", version: "1.0.0" }, options);
    const signedIn = new StreamableHTTPClientTransport(new URL(hub.url), { authProvider: auth });
    await client.connect(signedIn);
    clients.push(client);
    return { client, auth, transport: signedIn };
  }

  const uidOf = async (client: Client) => {
    const result = (await client.callTool({ name: "terminal_exec", arguments: { command: "id -u" } })) as CallToolResult;
    return textOf(result as never).match(/--- stdout ---\n(\d+)/)?.[1];
  };

  test("two people sign in through the whole flow and each runs as their own uid", async () => {
    const { client: ada } = await signedInClient("ada");
    const { client: grace } = await signedInClient("grace");
    const [uidAda, uidGrace] = [await uidOf(ada), await uidOf(grace)];
    assert.ok(uidAda && uidGrace);
    assert.notEqual(uidAda, uidGrace);
    assert.notEqual(uidAda, "0");
  });

  test("a 2026-07-28 client signs in the same way", async () => {
    const { client } = await signedInClient("ada", "2026-07-28");
    assert.ok(await uidOf(client));
  });

  for (const pin of [undefined, "2026-07-28"]) {
    test(`a person who granted reading only is sent to consent to the scope a write needs, and then writes (${pin ?? "2025 session"})`, async () => {
      const { client, auth, transport } = await signedInClient("lin", pin, "agentbox:read");
      const write = () => client.callTool({ name: "file_write", arguments: { path: "step-up.txt", content: "written" } });
      auth.authorizationUrl = undefined;
      // the hub's 403 insufficient_scope makes the client ask the person again, for the scope the write needs
      await assert.rejects(write(), UnauthorizedError);
      const again = auth.authorizationUrl as URL | undefined;
      assert.ok(again, "the client sent the person to consent again");
      const asked = again.searchParams.get("scope")?.split(" ") ?? [];
      assert.ok(asked.includes("agentbox:file") && asked.includes("agentbox:read"), asked.join(" "));
      await transport.finishAuth((await signInAs(again, "lin", REDIRECT)).searchParams);
      const written = (await write()) as CallToolResult;
      assert.notEqual(written.isError, true, textOf(written as never));
      const read = (await client.callTool({ name: "file_read", arguments: { path: "step-up.txt" } })) as CallToolResult;
      assert.match(textOf(read as never), /written/);
    });
  }
});

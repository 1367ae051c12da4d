// What a desktop client does to reach a remote MCP server: it runs `mcp-remote <hub>/mcp` as a
// local stdio server, and mcp-remote does the whole OAuth flow against the hub (meets the 401,
// reads the metadata, registers itself at the authorization server, opens the browser on the
// authorization URL, takes the code at its loopback callback, exchanges it) and relays MCP. Here
// the "browser" is a fixture that hands the URL to the test, which signs the person in over plain
// HTTP and follows the redirect to mcp-remote's callback; the SDK v1 client talks to mcp-remote
// over stdio, as the desktop client would.
import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { startHub, tempDir, textOf, type TestHub } from "../../helpers/hub.js";
import { startProvider, type TestProvider } from "../../helpers/oidc.js";
import { signInAs } from "../../helpers/oauth-client.js";
import { until } from "../../helpers/wait.js";

const asRoot = process.getuid?.() === 0;
const skip = asRoot ? false : "needs root: people get uids of their own only when the hub can switch users";
const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const mcpRemoteBin = path.join(repoRoot, "node_modules", ".bin", "mcp-remote");
const opener = path.join(repoRoot, "dist", "test", "fixtures", "url-opener.js");
// a loaded machine: the sign-in spans several processes and two servers
const SIGN_IN_MS = 120_000;

/** A port free on loopback now, for mcp-remote's OAuth callback. */
async function freeLoopbackPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface McpRemote {
  client: Client;
  /** What mcp-remote wrote to stderr: its account of the flow, for failure messages. */
  log: string[];
  /** Resolves when the client's connection through mcp-remote is up, or rejects with why not. */
  connected: Promise<void>;
  /** The URLs mcp-remote asked the browser to open so far. */
  opened(): URL[];
  /** The `n`th URL (from 1) mcp-remote asked the browser to open, once it has. */
  authorizationUrl(n: number): Promise<URL>;
  /** Resolves once the client is connected; throws as soon as mcp-remote failed or asked the person to sign in again. */
  through(): Promise<void>;
}

/**
 * mcp-remote for `url`, as a desktop client's config starts it, with its callback on 127.0.0.1,
 * its state in a folder of its own, and the test's opener as the only browser it can find.
 */
async function startMcpRemote(url: string, clients: Client[]): Promise<McpRemote> {
  const configDir = tempDir("mcp-remote-cfg-");
  const openedFile = path.join(tempDir("mcp-remote-opened-"), "urls.txt");
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [mcpRemoteBin, url, String(await freeLoopbackPort()), "--host", "127.0.0.1", "--transport", "http-only", "--auth-timeout", String(SIGN_IN_MS / 1000)],
    env: {
      ...getDefaultEnvironment(),
      MCP_REMOTE_CONFIG_DIR: configDir,
      // the `open` package runs xdg-open, which without a desktop or display hands the URL to $BROWSER
      XDG_CURRENT_DESKTOP: "X-Generic",
      BROWSER: `${process.execPath} ${opener}`,
      AGENTBOX_TEST_OPENED: openedFile,
    },
    stderr: "pipe",
  });
  const log: string[] = [];
  transport.stderr?.on("data", (chunk: Buffer) => log.push(chunk.toString()));
  const client = new Client({ name: "desktop-host", version: "1.0.0" });
  clients.push(client);
  let up = false;
  let failure: unknown;
  const connected = client.connect(transport, { timeout: SIGN_IN_MS }).then(() => {
    up = true;
  });
  connected.catch((err: unknown) => (failure = err ?? new Error("connect failed")));
  const opened = () => (fs.existsSync(openedFile) ? fs.readFileSync(openedFile, "utf8").split("\n").filter(Boolean) : []).map((line) => new URL(line));
  const failed = (what: string) => new Error(`${what}\n--- mcp-remote's log ---\n${log.join("")}`);
  return {
    client,
    log,
    connected,
    opened,
    authorizationUrl: (n) =>
      until(
        `mcp-remote to open authorization URL #${n}`,
        () => {
          if (failure) throw failed(`mcp-remote failed before opening a browser: ${String(failure)}`);
          if (up && !opened()[n - 1]) throw failed(`the client got through without sign-in #${n}: the hub took the token`);
          return opened()[n - 1];
        },
        SIGN_IN_MS,
      ),
    through: async () => {
      await until(
        "the client to get through mcp-remote",
        () => {
          if (failure) throw failed(`the client never got through mcp-remote: ${String(failure)}`);
          if (opened().length > 1) throw failed("the hub refused the token: mcp-remote sent the person to sign in again");
          return up;
        },
        SIGN_IN_MS,
      );
    },
  };
}

/** The person signs in at the URL mcp-remote opened, and their browser follows the redirect to mcp-remote's callback. */
async function signIn(url: URL, provider: TestProvider, hub: TestHub, login: string): Promise<void> {
  assert.equal(url.origin, provider.issuer, "mcp-remote sends the person to the issuer the hub's metadata names");
  assert.equal(url.searchParams.get("resource"), hub.url, "for the hub's resource URI (RFC 8707)");
  assert.equal(url.searchParams.get("code_challenge_method"), "S256");
  assert.ok(url.searchParams.get("client_id"), "with the client it registered");
  const redirect = new URL(url.searchParams.get("redirect_uri") ?? "");
  assert.equal(redirect.hostname, "127.0.0.1", "its callback is on loopback");
  const callback = await signInAs(url, login, redirect.href);
  const res = await fetch(callback);
  assert.equal(res.status, 200, `mcp-remote took the code: ${await res.text()}`);
}

const peopleIn = (hub: TestHub) => fs.readdirSync(hub.workspace).filter((name) => name.startsWith("p-"));

describe("mcp-remote signs a person in with OAuth and relays their tools over stdio", { skip }, () => {
  let provider: TestProvider;
  const hubs: TestHub[] = [];
  const clients: Client[] = [];

  before(async () => {
    provider = await startProvider();
  });
  after(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await Promise.allSettled(hubs.map((h) => h.stop()));
    await provider?.stop();
  });

  async function hubWith(env: Record<string, string> = {}): Promise<TestHub> {
    const hub = await startHub({ servers: ["terminal"], env: { AGENTBOX_OAUTH_ISSUER: provider.issuer, ...env } });
    hubs.push(hub);
    return hub;
  }

  test("the whole flow, then terminal_exec runs as the person's own uid", async () => {
    const hub = await hubWith();
    const remote = await startMcpRemote(hub.url, clients);
    await signIn(await remote.authorizationUrl(1), provider, hub, "ada");
    await remote.through();
    const { tools } = await remote.client.listTools();
    assert.ok(
      tools.some((t) => t.name === "terminal_exec"),
      tools.map((t) => t.name).join(", "),
    );
    const result = (await remote.client.callTool({ name: "terminal_exec", arguments: { command: "id -u" } })) as CallToolResult;
    const uid = textOf(result).match(/--- stdout ---\n(\d+)/)?.[1];
    assert.ok(uid, textOf(result));
    assert.notEqual(uid, "0", "the command does not run as root");
    // the person's tenant is the folder `p-<digest>` the hub made for them, owned by their uid
    const people = peopleIn(hub);
    assert.equal(people.length, 1, people.join(", "));
    assert.equal(String(fs.statSync(path.join(hub.workspace, people[0])).uid), uid, "the command runs as the person's tenant");
  });

  test("a hub that refuses the tokens it gets (issued for another audience) lets no call through", async () => {
    const hub = await hubWith({ AGENTBOX_OAUTH_AUDIENCE: "http://127.0.0.1:1/another-resource" });
    const remote = await startMcpRemote(hub.url, clients);
    await signIn(await remote.authorizationUrl(1), provider, hub, "grace");
    // the hub's 401 for the fresh token sends the person to sign in again; a second refusal and mcp-remote gives up
    await signIn(await remote.authorizationUrl(2), provider, hub, "grace");
    await assert.rejects(remote.connected);
    assert.equal(remote.opened().length, 2, "mcp-remote stopped asking");
    assert.deepEqual(peopleIn(hub), [], "no tenant was made for a refused token");
  });
});

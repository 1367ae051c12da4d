// Previews through real nginx with the shipped config (deploy/nginx) and two real hubs: a preview
// made on replica r2 names r2 in its token, so its URL opens through the router in the path form
// and the subdomain form, WebSocket included, wherever the router would send other requests; a
// token naming a replica the router does not know gets the router's own 404.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import WebSocket from "ws";
import { call, startHub, textOf } from "../helpers/hub.js";
import { freePort, get, startApp, type PreviewData } from "../hub/previews/apps.js";
import { auth, replicasBehindNginx } from "./router.js";

const NAMES = ["r1", "r2"];
const DOMAIN = "preview.localhost";

describe("previews over two replicas behind nginx (deploy/nginx)", () => {
  const replicas = replicasBehindNginx(NAMES, (name) =>
    startHub({ servers: ["terminal"], env: { AGENTBOX_REPLICA: name, AGENTBOX_PREVIEW_DOMAIN: DOMAIN, AGENTBOX_TRUSTED_PROXIES: "127.0.0.1" } }),
  );
  let made: PreviewData;
  let routerPort: string;
  let client: Client | undefined;
  after(() => client?.close());

  async function previewOnR2(): Promise<PreviewData> {
    if (made) return made;
    routerPort = new URL(replicas.router.origin).port;
    // a client whose key the router hashes to r2: its session, its terminal and its app live there
    client = new Client({ name: "nginx-previews", version: "1.0.0" });
    const headers = auth(replicas.keyOn.get("r2")!);
    await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", replicas.router.origin), { requestInit: { headers } }));
    assert.equal((await call(client, "hub_status")).structuredContent?.replica, "r2");
    const port = await freePort();
    await startApp(client, port, "app-on-r2");
    const result = await call(client, "hub_preview", { port });
    assert.ok(!result.isError, textOf(result));
    made = result.structuredContent as unknown as PreviewData;
    return made;
  }

  it("gives URLs with the router's address and r2's name, which open the app through the router", async () => {
    const preview = await previewOnR2();
    assert.match(preview.url, new RegExp(`^${replicas.router.origin}/preview/r2-[a-z2-7]{26}/$`));
    const page = await get(preview.url);
    assert.equal(page.status, 200, page.body);
    assert.match(page.body, /page of app-on-r2/);
    // r1 holds no such preview: the router's choice by the token is what opens it
    const direct = await get(preview.url.replace(replicas.router.origin, replicas.hubs.get("r1")!.origin));
    assert.equal(direct.status, 404);
  });

  it("opens the subdomain form through the router by its Host", async () => {
    const preview = await previewOnR2();
    assert.equal(preview.subdomainUrl, `http://${preview.port}-${preview.token}.${DOMAIN}:${routerPort}/`);
    const page = await get(preview.subdomainUrl!, {}, "127.0.0.1");
    assert.equal(page.status, 200, page.body);
    assert.match(page.body, /page of app-on-r2/);
  });

  it("passes WebSocket upgrades through the router, in both forms", async () => {
    const preview = await previewOnR2();
    const echo = (url: string, headers: Record<string, string> = {}) =>
      new Promise<string>((resolve, reject) => {
        const socket = new WebSocket(url, { headers });
        socket.once("open", () => socket.send("through nginx"));
        socket.once("message", (data) => (resolve(String(data)), socket.close()));
        socket.once("error", reject);
      });
    assert.equal(await echo(preview.url.replace(/^http/, "ws")), "app-on-r2 echoes through nginx");
    assert.equal(await echo(`ws://127.0.0.1:${routerPort}/`, { Host: new URL(preview.subdomainUrl!).host }), "app-on-r2 echoes through nginx");
  });

  it("answers a token naming a replica it does not know with its own 404", async () => {
    const preview = await previewOnR2();
    const unknown = preview.url.replace("/preview/r2-", "/preview/r9-");
    const page = await get(unknown);
    assert.equal(page.status, 404);
    assert.match(page.body, /Preview not found: the router knows no replica by the name this preview URL carries/);
    const host = await get(`http://${preview.port}-r9-${preview.token.slice(3)}.${DOMAIN}:${routerPort}/`, {}, "127.0.0.1");
    assert.equal(host.status, 404);
    assert.match(host.body, /Preview not found/);
  });
});

// Previews through real nginx with the shipped config (deploy/nginx) and two real hubs: a preview
// made on replica r2 names r2 in its token, so its URL opens through the router in the path form
// and the subdomain form, WebSocket included, wherever the router would send other requests; a
// token naming a replica the router does not know gets the router's own 404. Live views and
// recording downloads minted on r2 carry its name the same way and open through the router too.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import WebSocket from "ws";
import { call, startHub, textOf } from "../helpers/hub.js";
import { until } from "../helpers/wait.js";
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

  it("routes a live view (its page and its WebSocket) and a recording's download to the replica that minted them", async () => {
    await previewOnR2();
    const created = await call(client!, "terminal_session_create", { record: true });
    assert.ok(!created.isError, textOf(created));
    const id = (created.structuredContent as { id: string }).id;
    const sent = await call(client!, "terminal_session_send", { id, input: "echo routed-$((40+2))\n", waitFor: "routed-42" });
    assert.ok(!sent.isError, textOf(sent));

    const view = await call(client!, "hub_live_view", { terminal: id });
    assert.ok(!view.isError, textOf(view));
    const viewUrl = (view.structuredContent as { url: string }).url;
    assert.match(viewUrl, new RegExp(`^${replicas.router.origin}/live/r2-[a-z2-7]{26}$`));
    const page = await get(viewUrl);
    assert.equal(page.status, 200, page.body);
    assert.equal((await get(viewUrl.replace(replicas.router.origin, replicas.hubs.get("r1")!.origin))).status, 404, "r1 holds no such view");
    // the view's socket, from its own page's origin (the router's), shows the terminal's output
    const output = await new Promise<string>((resolve, reject) => {
      const socket = new WebSocket(`${viewUrl.replace(/^http/, "ws")}/socket`, { origin: replicas.router.origin });
      let seen = "";
      // as the view's page does: a stream starts with the viewer's hello
      socket.once("open", () => socket.send(JSON.stringify({ type: "hello", width: 800, height: 600 })));
      socket.on("message", (data) => {
        const message = JSON.parse(String(data)) as { type: string; data?: string };
        if (message.type !== "output") return;
        seen += message.data;
        // the view sends the next batch only once this one was drawn
        if (!seen.includes("routed-42")) return socket.send(JSON.stringify({ type: "ack" }));
        resolve(seen);
        socket.close();
      });
      socket.once("error", reject);
      socket.once("close", () => reject(new Error(`the socket closed before the output came: ${seen}`)));
      socket.once("unexpected-response", (_req, res) => reject(new Error(`the socket was refused: ${res.statusCode}`)));
    });
    assert.match(output, /routed-42/);

    const listed = await until("the recording is listed", async () => {
      const result = await call(client!, "hub_recordings");
      const found = (result.structuredContent as { recordings: Array<{ kind: string; url: string }> } | undefined)?.recordings.find((r) => r.kind === "terminal");
      return found;
    });
    assert.match(listed.url, new RegExp(`^${replicas.router.origin}/recordings/r2-[a-z2-7]{26}/`));
    const download = await until("the recording has the output", async () => {
      const got = await get(listed.url);
      return got.status === 200 && got.body.includes("routed-42") ? got : undefined;
    });
    assert.match(download.body, /^\{"version":2/);
    assert.equal((await get(listed.url.replace(replicas.router.origin, replicas.hubs.get("r1")!.origin))).status, 404, "r1 holds no such recording");

    // a token naming a replica the router does not know: its own 404, in the link's words
    const unknownView = await get(viewUrl.replace("/live/r2-", "/live/r9-"));
    assert.equal(unknownView.status, 404);
    assert.match(unknownView.body, /Live view not found: the router knows no replica/);
    const unknownRecording = await get(listed.url.replace("/recordings/r2-", "/recordings/r9-"));
    assert.equal(unknownRecording.status, 404);
    assert.match(unknownRecording.body, /Recording not found: the router knows no replica/);
  });
});

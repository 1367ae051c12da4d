// A port that passes from the previewed app to another socket between the hub's check and its
// connection: the hub's read of the socket tables serves a page's burst of requests for a moment,
// so a socket opened on the port in that moment (another tenant's, on a hub whose tenants share the
// network) must get nothing: no request, no preview cookie. Time is frozen here, so the hub's read
// is always the stale one; the apps are real processes on real sockets.
import assert from "node:assert/strict";
import http from "node:http";
import type net from "node:net";
import { once } from "node:events";
import { after, before, describe, test } from "node:test";
import { CheckedAgent, PortChangedHands } from "../../../hub/previews/checked-connection.js";
import { type Previews, type OpenPreview } from "../../../hub/previews/previews.js";
import { freePort, get, servePreviews, startAppProcess, stopAppProcess, upgradeStatus, type AppProcess, type PreviewServer } from "./apps.js";

describe("a previewed port that changes hands between the hub's check and its connection", () => {
  let served: PreviewServer;
  let previews: Previews;

  before(async () => {
    served = await servePreviews();
    previews = served.previews;
  });

  after(() => served.close());

  test("the new socket gets no request and no upgrade; the visitor gets a 502", async () => {
    const port = await freePort();
    const first = await startAppProcess(port, "first");
    let second: AppProcess | undefined;
    try {
      const opened = (await previews.open({ tenant: "t", uid: process.getuid!(), session: "s", port })) as OpenPreview;
      assert.equal(typeof opened, "object", String(opened));
      const page = await get(opened.url);
      assert.equal(page.status, 200);
      assert.match(page.body, /page of first/, "the hub's read of the tables now names the first app's socket");
      // the first app ends and another socket takes its port; the hub's read still names the first
      await stopAppProcess(first);
      second = await startAppProcess(port, "second");
      for (const path of ["", "events", "index.html?x=1"]) {
        const got = await get(opened.url + path, { Cookie: "visitor=secret" });
        assert.equal(got.status, 502, got.body);
        assert.doesNotMatch(got.body, /second/);
        assert.match(got.body, /nothing of the preview's owner listens on port/);
      }
      assert.match(await upgradeStatus(opened.url + "ws"), /^HTTP\/1\.1 502/);
      assert.doesNotMatch(second.output(), /REQUEST|UPGRADE/, "no byte of a visitor's request reached the socket that took the port");
    } finally {
      await stopAppProcess(first);
      if (second) await stopAppProcess(second);
    }
  });
});

describe("a preview's checked connections", () => {
  test("are checked once each and kept for the requests after; a refused check sends nothing", async () => {
    let connections = 0;
    let requests = 0;
    const app = http.createServer((_req, res) => (requests++, res.end("ok")));
    app.on("connection", () => connections++);
    app.listen(0, "127.0.0.1");
    await once(app, "listening");
    const { port } = app.address() as net.AddressInfo;
    let checks = 0;
    let owned = true;
    const agent = new CheckedAgent("127.0.0.1", port, "1", async () => (checks++, owned));
    const fetchOne = () =>
      new Promise<string>((resolve, reject) => {
        http
          .get({ host: "127.0.0.1", port, path: "/", agent }, (res) => {
            let body = "";
            res.on("data", (chunk) => (body += chunk));
            res.on("end", () => resolve(body));
          })
          .on("error", reject);
      });
    try {
      for (let i = 0; i < 10; i++) assert.equal(await fetchOne(), "ok");
      assert.deepEqual({ connections, checks, requests }, { connections: 1, checks: 1, requests: 10 }, "one connection, checked once, carried ten requests");
      agent.retire();
      owned = false;
      await assert.rejects(fetchOne(), (err: Error) => err instanceof PortChangedHands);
      assert.deepEqual({ connections, checks, requests }, { connections: 2, checks: 2, requests: 10 }, "the refused connection carried no request");
    } finally {
      agent.destroy();
      app.close();
    }
  });
});

// The trace viewer's route on its own: its pages get a policy whose frames are only the viewer's
// snapshots at the origin the browser used, its service worker comes with the code that adds that
// rule to each snapshot, UI mode's page is not served. What these do in Chromium against a hostile
// recording is test/hub/previews/trace-viewer-attack.test.ts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Hono } from "hono";
import { mountTraceViewer, viewerPolicy } from "../../hub/playground/trace-viewer.js";
import { SNAPSHOT_HARDENING } from "../../hub/playground/trace-viewer-sw.js";
import { tempDir } from "../helpers/hub.js";

const INLINE = "if (!/^https?:/.test(location.protocol)) document.body.append('use http');";

function viewerApp(origin: string | undefined): Hono {
  const dir = tempDir("agentbox-tv-");
  fs.writeFileSync(path.join(dir, "index.html"), `<!doctype html><script type="module" src="./index.js"></script><script>${INLINE}</script>`);
  fs.writeFileSync(path.join(dir, "index.js"), "/* viewer */");
  fs.writeFileSync(path.join(dir, "sw.bundle.js"), "self.addEventListener('fetch', () => {});");
  fs.writeFileSync(path.join(dir, "uiMode.html"), "<!doctype html>ui mode");
  const app = new Hono();
  mountTraceViewer(app, { originOf: () => origin, dir });
  return app;
}

test("the viewer's pages let scripts be only its own and frames only its snapshots, at the browser's origin", async () => {
  const page = await viewerApp("http://127.0.0.1:8080").request("/trace-viewer/index.html");
  assert.equal(page.status, 200);
  const policy = page.headers.get("content-security-policy") ?? "";
  const hash = createHash("sha256").update(INLINE).digest("base64");
  assert.match(policy, new RegExp(`script-src 'self' 'sha256-${hash.replace(/[+/]/g, "\\$&")}'`));
  assert.match(policy, /frame-src http:\/\/127\.0\.0\.1:8080\/trace-viewer\/snapshot\/ data:(;|$)/);
  assert.match(policy, /object-src 'none'/);
  assert.match(policy, /form-action 'none'/);
});

test("a Host that is no host name gets no frame source, and cannot add rules to the policy", () => {
  for (const origin of ["http://evil.example; script-src *", "http://a b", "javascript://x", undefined]) {
    const policy = viewerPolicy(origin);
    assert.match(policy, /frame-src data:$/, String(origin));
    assert.doesNotMatch(policy, /evil|\*/);
  }
  assert.match(viewerPolicy("https://[::1]:8443"), /frame-src https:\/\/\[::1\]:8443\/trace-viewer\/snapshot\/ data:$/);
});

test("the service worker comes after the code that hardens its snapshots; scripts have no page policy; UI mode is not served", async () => {
  const app = viewerApp("http://127.0.0.1:8080");
  const worker = await app.request("/trace-viewer/sw.bundle.js");
  assert.equal(worker.headers.get("content-type"), "text/javascript; charset=utf-8");
  assert.equal(await worker.text(), `${SNAPSHOT_HARDENING}self.addEventListener('fetch', () => {});`);
  assert.equal(worker.headers.get("content-security-policy"), null, "a policy on the worker would rule what it fetches: the traces");
  assert.equal((await app.request("/trace-viewer/index.js")).headers.get("content-security-policy"), null);
  assert.equal((await app.request("/trace-viewer/uiMode.html")).status, 404);
});

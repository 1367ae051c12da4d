// The route on its own: a hub whose playground was never bundled says so instead of serving a
// broken page, and only the known files are served.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { Hono } from "hono";
import { mountPlayground } from "../../hub/playground/route.js";
import { tempDir } from "../helpers/hub.js";

test("an unbuilt playground answers 503 naming the build step", async () => {
  const app = new Hono();
  mountPlayground(app, `${tempDir("agentbox-pg-")}/`);
  const res = await app.request("/playground");
  assert.equal(res.status, 503);
  assert.match((await res.json()).error, /not built .*npm run build/);
});

test("serves the built files with their types and a CSP, and nothing else", async () => {
  const dir = tempDir("agentbox-pg-");
  for (const name of ["index.html", "app.js", "app.css", "favicon.svg"]) fs.writeFileSync(path.join(dir, name), `/* ${name} */`);
  fs.writeFileSync(path.join(dir, "secret.txt"), "no");
  const app = new Hono();
  mountPlayground(app, `${dir}/`);
  const page = await app.request("/playground");
  assert.equal(page.status, 200);
  assert.equal(await page.text(), "/* index.html */");
  assert.match(page.headers.get("content-security-policy") ?? "", /default-src 'none'/);
  assert.equal((await app.request("/playground/app.css")).headers.get("content-type"), "text/css; charset=utf-8");
  assert.equal((await app.request("/playground/secret.txt")).status, 404);
  const slash = await app.request("/playground/");
  assert.equal(slash.status, 301);
  assert.equal(slash.headers.get("location"), "/playground");
});

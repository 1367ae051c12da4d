// Chromium binds a Unix socket under its TMPDIR, whose path may hold at most 107 bytes: under a
// tenant's TMPDIR (<state dir>/tenants/<tenant>-<uid>/tmp) a long tenant name or a deep state
// folder made it abort, and the tool said only "browser has been closed". The browser server gives
// Chromium a short temp folder of its own, private to the tenant; and a Chromium that cannot start
// says why, in its own words.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ChromiumHost } from "../../servers/browser/chromium.js";
import { createLogger } from "../../servers/lib/log.js";
import { startSite, type Site } from "../fixtures/browser/site.js";
import { environOf } from "../helpers/environ.js";
import { startHub, tempDir, type TestHub } from "../helpers/hub.js";
import { until } from "../helpers/wait.js";
import { ok, textOf } from "./harness.js";

const KEY = "temp-paths-tenant-key-0123456789";
// the longest name a tenant may have (hub/config/schema.ts)
const LONG_TENANT = "tenant-with-a-long-name-".padEnd(32, "x");

/** A folder whose own path is long (Chromium's socket path under it cannot fit), which a tenant's uid may pass through. */
function deepDir(prefix: string): string {
  const top = tempDir(prefix);
  fs.chmodSync(top, 0o711);
  const dir = path.join(top, "d".repeat(50), "e".repeat(30));
  fs.mkdirSync(dir, { recursive: true, mode: 0o711 });
  return dir;
}

describe("Chromium under a long tenant temp path", { skip: process.getuid?.() === 0 ? false : "needs root: tenants get their own uid and temp folder" }, () => {
  let hub: TestHub;
  let site: Site;
  let client: Client;
  let stateDir: string;

  before(async () => {
    site = await startSite();
    stateDir = deepDir("agentbox-deep-state-");
    hub = await startHub({ servers: ["browser"], config: { tenants: { [LONG_TENANT]: { apiKey: KEY } } }, env: { AGENTBOX_STATE_DIR: stateDir } });
    client = await hub.connect({ headers: { Authorization: `Bearer ${KEY}` } });
  });
  after(async () => {
    await hub?.stop();
    await site?.close();
  });

  test("a tenant with a long name and a deep state folder navigates a page; Chromium's temp folder is the tenant's alone, and removed", async () => {
    const tenantTmp = fs.readdirSync(path.join(stateDir, "tenants")).map((entry) => path.join(stateDir, "tenants", entry, "tmp"))[0];
    assert.ok(tenantTmp.length > 100, `the tenant's TMPDIR is long: ${tenantTmp}`);
    const snapshot = textOf(await ok(client, "navigate", { url: `${site.origin}/a` }));
    assert.match(snapshot, new RegExp(`URL: ${site.origin}/a`));

    const { pid } = (await ok(client, "info")).structuredContent as { pid: number };
    // read as Chromium's own uid where root may not (a container without CAP_SYS_PTRACE, as CI's)
    const environ = environOf(pid).toString("utf8").split("\0");
    const chromiumTmp = environ.find((v) => v.startsWith("TMPDIR="))!.slice("TMPDIR=".length);
    const tenantUid = fs.statSync(tenantTmp).uid;
    assert.notEqual(tenantUid, 0, "the tenant runs under a uid of its own");
    const st = fs.statSync(chromiumTmp);
    assert.equal(st.uid, tenantUid, `${chromiumTmp} is the tenant's`);
    assert.equal(st.mode & 0o777, 0o700, `${chromiumTmp}: no other user may enter it`);

    await hub.stop();
    await until(`${chromiumTmp} to be removed with its Chromium`, () => !fs.existsSync(chromiumTmp));
  });
});

describe("a Chromium that cannot start", () => {
  test("says Chromium's own reason, not only that the browser closed; its temp folder is removed", async () => {
    // a temp folder in a deep place: Chromium aborts on its socket path, as it did under long tenant paths
    const root = deepDir("agentbox-chromium-root-");
    const host = new ChromiumHost(createLogger({}, { write: () => undefined }), [root]);
    try {
      await assert.rejects(host.browser(), (err: Error) => {
        assert.match(err.message, /^Chromium \(.*\) failed to start: Socket path too long: .*SingletonSocket/);
        return true;
      });
      assert.deepEqual(fs.readdirSync(root), [], "the temp folder made for it is gone");
    } finally {
      await host.close();
    }
  });
});

// The sizes docs/clients.md quotes for `tools/list` (the full catalog, the hub's own tools in search
// mode) against a real hub with every built-in server, measured as the playground shows them: the
// JSON of the result, in KB of 1024 bytes. "About" allows 5% (at least half a KB).
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { distRoot } from "../../hub/config/config.js";
import { startHub, type TestHub } from "../helpers/hub.js";

const PAGE = "docs/clients.md";
const page = fs.readFileSync(path.join(path.dirname(distRoot()), PAGE), "utf8");

/** The number of KB a sentence of the page quotes, found by the words around it. */
function quoted(pattern: RegExp): number {
  const match = page.match(pattern);
  assert.ok(match, `${PAGE} no longer says ${pattern}; update this test with it`);
  return Number(match[1]);
}

function assertAbout(saidKb: number, bytes: number, what: string): void {
  const kb = bytes / 1024;
  const slack = Math.max(0.5, saidKb * 0.05);
  assert.ok(
    Math.abs(kb - saidKb) <= slack,
    `${PAGE} says ${what} is about ${saidKb} KB; it is ${kb.toFixed(1)} KB (${bytes} bytes): write about ${Math.round(kb)} KB`,
  );
}

const listedBytes = async (hub: TestHub, pathAndQuery: string) => {
  const client = await hub.connect({ path: pathAndQuery });
  return Buffer.byteLength(JSON.stringify({ tools: (await client.listTools()).tools }));
};

describe("the catalog figures docs/clients.md quotes", () => {
  let hub: TestHub;
  before(async () => {
    // the catalog as a client first reads it: every server listed from the build's manifest, none started (as by default)
    hub = await startHub({ env: { AGENTBOX_START: "" } });
  });
  after(() => hub.stop());

  test("the full catalog's size", async () => {
    assertAbout(quoted(/the full\s+catalog is about (\d+) KB of `tools\/list`/), await listedBytes(hub, "/mcp"), "the full catalog");
  });

  test("the hub's own tools in search mode", async () => {
    assertAbout(quoted(/the hub's own tools \(about (\d+) KB\)/), await listedBytes(hub, "/mcp?catalog=search"), "search mode's first tools/list");
  });
});

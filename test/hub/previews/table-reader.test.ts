// The socket tables' reader thread (hub/previews/table-reader.ts) when the thread itself fails:
// every read waiting on it is refused with the reason (a preview's visitor then gets a 502 saying
// the hub could not check the port, never a connection to an unchecked socket), and the next read
// starts a thread of its own, so one failure does not end previews for the hub's lifetime.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { readListening } from "../../../hub/previews/listening-sockets.js";
import { PortAccessCheck } from "../../../hub/previews/port-access.js";
import type { OpenPreview } from "../../../hub/previews/previews.js";
import { TableReader } from "../../../hub/previews/table-reader.js";
import { tempDir } from "../../helpers/hub.js";
import { freePort, frozenClock, servePreviews, startAppProcess, stopAppProcess, upgradeStatus } from "./apps.js";

// a thread that ends (as one killed for its memory would) when asked for the file named "die"
const FAILING_SOURCE = `
const { parentPort } = require("node:worker_threads");
parentPort.on("message", ({ id, files }) => {
  if (files[0] === "die") process.exit(3);
  else parentPort.postMessage({ id, tables: files.map((file) => "read " + file) });
});
`;

test("a reader thread that ends refuses the reads waiting on it, and the next read starts a new thread", async () => {
  const reader = new TableReader(FAILING_SOURCE);
  assert.deepEqual(await reader.read(["before"], ":1F90"), ["read before"]);
  const dying = reader.read(["die"], ":1F90");
  const alongside = reader.read(["die"], ":1F90");
  await assert.rejects(dying, /the socket table reader ended \(code 3\)/);
  await assert.rejects(alongside, /the socket table reader ended \(code 3\)/);
  assert.deepEqual(await reader.read(["after"], ":1F90"), ["read after"]);
});

test("the real thread returns each table's header and only the lines naming the port", async () => {
  const dir = tempDir("agentbox-tables-");
  const table = path.join(dir, "tcp");
  fs.writeFileSync(table, "  sl  local_address rem_address\n   0: 0100007F:1F90 00000000:0000 0A\n   1: 0100007F:1F91 00000000:0000 0A\n");
  const reader = new TableReader();
  const [read, missing] = await reader.read([table, path.join(dir, "absent")], ":1F90");
  assert.equal(read, "  sl  local_address rem_address\n   0: 0100007F:1F90 00000000:0000 0A");
  assert.equal(missing, "", "a table that cannot be read (no IPv6) reads as empty");
  fs.rmSync(dir, { recursive: true, force: true });
});

test("a preview whose check of the socket tables fails answers 502 saying so, and its app is sent nothing", async () => {
  const port = await freePort();
  const app = await startAppProcess(port, "the app");
  // the tables read as they are while the preview opens, then the reads fail (the reader thread died meanwhile)
  let failing = false;
  const read = (asked: number) => (failing ? Promise.reject(new Error("the socket table reader ended (code 3)")) : readListening(asked));
  const { previews, close } = await servePreviews(new PortAccessCheck(frozenClock, read));
  try {
    const opened = (await previews.open({ tenant: "t", uid: process.getuid!(), session: "s", port })) as OpenPreview;
    assert.equal(typeof opened, "object", String(opened));
    failing = true;
    const got = await fetch(opened.url);
    assert.equal(got.status, 502);
    assert.match(await got.text(), /socket table reader ended/);
    assert.match(await upgradeStatus(opened.url + "ws"), /^HTTP\/1\.1 502/);
    assert.doesNotMatch(app.output(), /REQUEST|UPGRADE/, "no request reached a socket the hub could not confirm");
    // the reads work again (a new thread): the preview serves
    failing = false;
    const again = await fetch(opened.url);
    assert.equal(again.status, 200);
    assert.equal(await again.text(), "page of the app");
  } finally {
    close();
    await stopAppProcess(app);
  }
});

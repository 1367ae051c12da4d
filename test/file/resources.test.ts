// Workspace files as MCP resources, and two client sessions sharing the one workspace.
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { textOf } from "../helpers/hub.js";
import { startFiles, structured, type FileHarness } from "./harness.js";

let f: FileHarness;
before(async () => {
  f = await startFiles();
  f.put("docs/read me.md", "# Hello\n");
  f.put("img/pixel.bin", Buffer.from([0, 1, 2, 250]));
  f.put(".secret/token", "t");
  f.put("node_modules/x/index.js", "x");
  await f.tool("snapshot_take", { name: "snap" });
});
after(async () => {
  await f?.stop();
});

describe("catalog", () => {
  test("every tool is published with the prefix, annotations and, for data, an output schema", async () => {
    const tools = (await f.client.listTools()).tools.filter((t) => t.name.startsWith("file_"));
    const expected = [
      "read",
      "read_many",
      "write",
      "edit",
      "list",
      "tree",
      "find",
      "grep",
      "move",
      "copy",
      "delete",
      "mkdir",
      "info",
      "snapshot_take",
      "snapshot_list",
      "snapshot_restore",
      "snapshot_delete",
      "changes",
    ];
    assert.deepEqual(tools.map((t) => t.name).sort(), expected.map((n) => `file_${n}`).sort());
    for (const t of tools) {
      assert.ok(t.annotations && typeof t.annotations.readOnlyHint === "boolean", `${t.name} annotations`);
      assert.ok(t.outputSchema, `${t.name} outputSchema`);
    }
  });
});

describe("resources", () => {
  test("the template is published and resources/list shows workspace files only", async () => {
    const templates = await f.client.listResourceTemplates();
    assert.ok(templates.resourceTemplates.some((t) => t.uriTemplate === "file:///{+path}"));
    const { resources } = await f.client.listResources();
    const uris = resources.map((r) => r.uri).sort();
    assert.deepEqual(uris, ["file:///docs/read%20me.md", "file:///img/pixel.bin"]);
    assert.equal(resources.find((r) => r.uri.endsWith(".md"))?.mimeType, "text/markdown");
  });

  test("resources/read returns text, or a blob for binaries", async () => {
    const text = await f.client.readResource({ uri: "file:///docs/read%20me.md" });
    assert.equal((text.contents[0] as { text: string }).text, "# Hello\n");
    const blob = await f.client.readResource({ uri: "file:///img/pixel.bin" });
    assert.deepEqual(Buffer.from((blob.contents[0] as { blob: string }).blob, "base64"), Buffer.from([0, 1, 2, 250]));
  });

  test("resources/read refuses escapes, agentbox's folder and missing files", async () => {
    for (const uri of ["file:///..%2F..%2Fetc%2Fpasswd", "file:///.agentbox/snapshots/snap/meta.json", "file:///docs/missing.md"]) {
      await assert.rejects(f.client.readResource({ uri }), /outside the workspace|agentbox's private folder|No such file/, uri);
    }
  });
});

describe("sessions", () => {
  test("two client sessions work side by side on the one shared workspace", async () => {
    const other = await f.hub.connect();
    const wrote = await f.tool("write", { path: "shared/from-a.txt", content: "from a" }, f.client);
    assert.equal(wrote.isError, undefined);
    assert.equal(textOf(await f.tool("read", { path: "shared/from-a.txt" }, other)), "from a");
    await f.tool("edit", { path: "shared/from-a.txt", edits: [{ oldText: "a", newText: "b" }] }, other);
    assert.equal(textOf(await f.tool("read", { path: "shared/from-a.txt" }, f.client)), "from b");
    await other.close();
    // the first session is unaffected by the second one ending
    const list = structured(await f.tool("list", { path: "shared" }, f.client));
    assert.deepEqual(
      list.entries.map((e: { name: string }) => e.name),
      ["from-a.txt"],
    );
    assert.ok(fs.existsSync(path.join(f.workspace, "shared/from-a.txt")));
  });
});

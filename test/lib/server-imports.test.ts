// Servers do not import each other: a file under servers/<name>/ imports only its own folder,
// servers/lib/ and servers/builtin.ts (and packages). What two servers share lives in lib, so each
// server stays a program of its own that can be changed, run or left out alone.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";

// this file runs as dist/test/lib/server-imports.test.js; the sources are the repository's
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const SERVERS = path.join(ROOT, "servers");
const SHARED = ["lib"];
const SHARED_FILES = ["builtin.ts", "builtin.js"];
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs)$/;

/** Every module specifier of a source: imports, `export … from`, `import type` and import(). */
function specifiers(source: string): string[] {
  return ts.preProcessFile(source, true, true).importedFiles.map((f) => f.fileName);
}

/** The imports of `file` (a path under servers/) that reach outside its server and the shared code. */
function crossings(file: string, source: string): string[] {
  const [folder] = path.relative(SERVERS, file).split(path.sep);
  return specifiers(source).filter((spec) => {
    if (!spec.startsWith(".")) return false; // a package or a node: builtin
    const [first, ...rest] = path.relative(SERVERS, path.resolve(path.dirname(file), spec)).split(path.sep);
    if (first === folder || SHARED.includes(first!)) return false;
    return !(rest.length === 0 && SHARED_FILES.includes(first!));
  });
}

function sourcesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => SOURCE.test(f)).map((f) => path.join(dir, f));
}

test("crossings finds another server's folder, hub/ and test/ in every kind of import, and allows lib and builtin", () => {
  const file = path.join(SERVERS, "browser", "tools", "page.ts");
  const source = [
    `import { a } from "../../file/content.js";`,
    `import type { B } from "../../markitdown/convert.js";`,
    `export { c } from "../../arxiv/ids.js";`,
    `const d = await import("../../terminal/keys.js");`,
    `import { e } from "../../../hub/config.js";`,
    `import "../../../test/helpers/hub.js";`,
    `import { f } from "../../lib/tool.js";`,
    `import { g } from "../runtime.js";`,
    `import { BUILTIN_SERVERS } from "../../builtin.js";`,
    `import { z } from "zod";`,
    `import fs from "node:fs";`,
  ].join("\n");
  assert.deepEqual(crossings(file, source), [
    "../../file/content.js",
    "../../markitdown/convert.js",
    "../../arxiv/ids.js",
    "../../terminal/keys.js",
    "../../../hub/config.js",
    "../../../test/helpers/hub.js",
  ]);
  // lib is shared, not a server: it may not lean on one either
  const lib = `import { m } from "../file/content.js";\nimport { n } from "./tool.js";`;
  assert.deepEqual(crossings(path.join(SERVERS, "lib", "x.ts"), lib), ["../file/content.js"]);
});

test("no file under servers/<name>/ imports another server's folder", () => {
  const folders = fs.readdirSync(SERVERS, { withFileTypes: true }).filter((e) => e.isDirectory());
  assert.ok(folders.length > 1, `no server folders found in ${SERVERS}`);
  const found: string[] = [];
  for (const folder of folders) {
    for (const file of sourcesUnder(path.join(SERVERS, folder.name))) {
      for (const spec of crossings(file, fs.readFileSync(file, "utf8"))) found.push(`${path.relative(ROOT, file)} imports ${spec}`);
    }
  }
  assert.deepEqual(found, [], "move what servers share into servers/lib/");
});

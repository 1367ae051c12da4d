// scripts/runtime-modules.mjs: the image keeps in node_modules what the bundles leave outside and the
// code server's JavaScript driver imports, with everything those depend on, and nothing else.
import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { distRoot } from "../../hub/config/config.js";
import { loadConfig } from "../../servers/code/config.js";

const projectDir = path.dirname(distRoot());
type Lock = Record<string, { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string>; peerDependencies?: Record<string, string> }>;
interface RuntimeModules {
  runtimeClosure(lock: Lock, roots: string[]): Set<string>;
  plan(projectDir?: string): Promise<{ roots: string[]; kept: string[]; removed: string[] }>;
}
const load = async (): Promise<RuntimeModules> => (await import(pathToFileURL(path.join(projectDir, "scripts", "runtime-modules.mjs")).href)) as RuntimeModules;
const bundleScript = async (): Promise<{ UNBUNDLED_ENTRIES: string[] }> =>
  (await import(pathToFileURL(path.join(projectDir, "scripts", "bundle.mjs")).href)) as { UNBUNDLED_ENTRIES: string[] };

test("a dependency is found where Node finds it: the dependent's own node_modules first, then up the tree", async () => {
  const { runtimeClosure } = await load();
  const lock: Lock = {
    "": {},
    "node_modules/app-external": { dependencies: { shared: "^2" }, peerDependencies: { peer: "*" }, optionalDependencies: { absent: "*" } },
    // the dependent's own copy wins over the top-level one
    "node_modules/app-external/node_modules/shared": { dependencies: { leaf: "*" } },
    "node_modules/shared": { dependencies: { "only-via-top-shared": "*" } },
    "node_modules/only-via-top-shared": {},
    "node_modules/leaf": {},
    "node_modules/peer": {},
    "node_modules/bundled-only": { dependencies: { leaf: "*" } },
  };
  const kept = runtimeClosure(lock, ["app-external", "not-installed"]);
  assert.deepEqual([...kept].sort(), ["node_modules/app-external", "node_modules/app-external/node_modules/shared", "node_modules/leaf", "node_modules/peer"]);
});

test("the project's plan keeps the externals, the driver's imports and their dependencies, and drops what is bundled", async () => {
  const { plan } = await load();
  const { roots, kept, removed } = await plan(projectDir);
  // acorn is imported only by the code server's JavaScript driver, which runs from tsc's output
  for (const root of ["playwright-core", "markitdown-ts", "node-pty", "acorn"]) assert.ok(roots.includes(root), `${root} is not among ${roots.join(", ")}`);
  // markitdown-ts's dependencies (pdf-parse → pdfjs-dist) and its peer unzipper
  for (const key of ["acorn", "playwright-core", "markitdown-ts", "pdf-parse", "pdfjs-dist", "mammoth", "xlsx", "unzipper", "node-pty"])
    assert.ok(kept.includes(`node_modules/${key}`), `node_modules/${key} is not kept`);
  // inside the bundles (hono, prom-client, the SDKs) or dev only (esbuild, typescript)
  for (const key of ["hono", "prom-client", "@modelcontextprotocol/sdk", "@opentelemetry/sdk-trace-node", "esbuild", "typescript"])
    assert.ok(removed.includes(`node_modules/${key}`), `node_modules/${key} is not removed`);
  assert.equal(kept.filter((key) => removed.includes(key)).length, 0);
});

test("the code server's JavaScript driver is among the programs run from tsc's output", async () => {
  const { UNBUNDLED_ENTRIES } = await bundleScript();
  const driver = path.relative(path.join(projectDir, "dist"), loadConfig().jsDriver).split(path.sep).join("/");
  assert.ok(UNBUNDLED_ENTRIES.includes(driver), `${driver} is not in scripts/bundle.mjs's UNBUNDLED_ENTRIES (${UNBUNDLED_ENTRIES.join(", ")})`);
});

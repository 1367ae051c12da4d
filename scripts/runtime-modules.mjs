// The npm packages agentbox loads at run time, and only those, for the container image.
//
// The hub and each built-in server run from bundles (scripts/bundle.mjs) that hold their npm
// dependencies inside them; what a bundle leaves outside (EXTERNAL there: packages that read files or
// native addons from their own folder) is loaded from node_modules. So is what the one program run
// from tsc's output rather than a bundle imports (UNBUNDLED_ENTRIES there: the code server's
// JavaScript driver). Those packages and everything they depend on, as package-lock.json resolves
// it, are the runtime's node_modules; the rest (the bundled packages, the dev dependencies) is
// never read in the image and weighs ~30 MB there.
//
//   node scripts/runtime-modules.mjs           what would be kept and removed, and their sizes
//   node scripts/runtime-modules.mjs --prune   remove the rest from node_modules (the image's build stage)
//
// Plain JavaScript: the Dockerfile runs it after `npm run build`, with the dev dependencies still
// there (esbuild reads the driver's imports); it removes them too.
import fs from "node:fs";
import { isBuiltin } from "node:module";
import path from "node:path";
import * as esbuild from "esbuild";
import { EXTERNAL, UNBUNDLED_ENTRIES } from "./bundle.mjs";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");

/** A bare import's package: "@scope/name/sub/path" → "@scope/name", "name/sub" → "name". */
export function packageOf(specifier) {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/** The packages the files run from tsc's output import, found by esbuild as it would bundle them. */
async function importsOfUnbundled(dist) {
  const found = new Set();
  for (const entry of UNBUNDLED_ENTRIES) {
    const file = path.join(dist, entry);
    if (!fs.existsSync(file)) throw new Error(`${path.relative(root, file)} is missing: run npm run build first.`);
    const { metafile } = await esbuild.build({
      entryPoints: [file],
      bundle: true,
      write: false,
      platform: "node",
      format: "esm",
      packages: "external",
      metafile: true,
      logLevel: "silent",
    });
    for (const output of Object.values(metafile.outputs))
      for (const { path: specifier, external } of output.imports) if (external && !isBuiltin(specifier)) found.add(packageOf(specifier));
  }
  return [...found];
}

/** Where Node finds `name` from the package installed at `from` ("" for the project), as the lock file lays node_modules out. */
function resolveIn(lock, from, name) {
  for (let dir = from; ;) {
    const candidate = `${dir ? `${dir}/` : ""}node_modules/${name}`;
    if (lock[candidate]) return candidate;
    if (!dir) return undefined;
    const parent = dir.lastIndexOf("/node_modules/");
    dir = parent === -1 ? "" : dir.slice(0, parent);
  }
}

/**
 * The installed packages (their lock file keys, "node_modules/…") that `roots` need: each root and,
 * transitively, its dependencies, optional dependencies and peer dependencies. Roots and optional
 * packages not installed are left out, as Node would find them missing too.
 */
export function runtimeClosure(lock, roots) {
  const kept = new Set();
  const pending = roots.map((name) => resolveIn(lock, "", name)).filter(Boolean);
  while (pending.length) {
    const key = pending.pop();
    if (kept.has(key)) continue;
    kept.add(key);
    const { dependencies, optionalDependencies, peerDependencies } = lock[key];
    for (const name of Object.keys({ ...dependencies, ...optionalDependencies, ...peerDependencies })) {
      const found = resolveIn(lock, key, name);
      if (found) pending.push(found);
    }
  }
  return kept;
}

function sizeOf(dir) {
  let bytes = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    // a nested node_modules holds packages of their own, counted as such
    if (entry.isDirectory()) bytes += entry.name === "node_modules" ? 0 : sizeOf(full);
    else if (entry.isFile()) bytes += fs.statSync(full).size;
  }
  return bytes;
}

/** The runtime's packages and the rest, of what is installed under `projectDir`. */
export async function plan(projectDir = root) {
  const lock = JSON.parse(fs.readFileSync(path.join(projectDir, "package-lock.json"), "utf8")).packages;
  const roots = [...EXTERNAL, ...(await importsOfUnbundled(path.join(projectDir, "dist")))];
  const kept = runtimeClosure(lock, roots);
  const installed = Object.keys(lock).filter((key) => key.startsWith("node_modules/") && fs.existsSync(path.join(projectDir, key)));
  return { roots, kept: installed.filter((key) => kept.has(key)), removed: installed.filter((key) => !kept.has(key)) };
}

async function main() {
  const prune = process.argv.includes("--prune");
  const { roots, kept, removed } = await plan();
  const mb = (keys) => (keys.reduce((sum, key) => sum + sizeOf(path.join(root, key)), 0) / 1e6).toFixed(1);
  console.log(`runtime packages: ${roots.join(", ")}`);
  console.log(`keeping ${kept.length} installed packages (${mb(kept)} MB); ${prune ? "removing" : "would remove"} ${removed.length} (${mb(removed)} MB)`);
  if (!prune) return;
  // deepest first, so a package's own node_modules goes before it
  for (const key of removed.sort((a, b) => b.length - a.length)) fs.rmSync(path.join(root, key), { recursive: true, force: true });
  const modules = path.join(root, "node_modules");
  // what npm keeps beside the packages: its record of the tree (no longer true) and links to removed packages' commands
  fs.rmSync(path.join(modules, ".package-lock.json"), { force: true });
  const bin = path.join(modules, ".bin");
  if (fs.existsSync(bin)) for (const name of fs.readdirSync(bin)) if (!fs.existsSync(path.join(bin, name))) fs.rmSync(path.join(bin, name), { force: true });
  // scope folders left empty
  for (const name of fs.readdirSync(modules)) {
    const dir = path.join(modules, name);
    if (name.startsWith("@") && fs.readdirSync(dir).length === 0) fs.rmdirSync(dir);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) await main();

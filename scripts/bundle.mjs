// The hub and each built-in server as one ES module file each (dist/bundle/hub/main.js,
// dist/bundle/servers/<name>/main.js), made from tsc's output with its npm dependencies inlined.
// Why: a process that loads ~700 small modules spends most of its start opening, statting and
// compiling them (a hub took ~1.3 s of CPU to listen; bundled, ~0.6 s). Every hub and every server
// start pays that, in the container and in each test.
//
// Code that finds files next to itself (`import.meta.url`: the playground's static folder, the
// code server's drivers, package.json) keeps finding them where tsc put them: each module's
// `import.meta.url` becomes its own file's URL, written relative to the bundle, so dist/ can move.
// Packages that load files or native addons from their own folder stay outside the bundle.
// Plain JavaScript: scripts/build.mjs runs it after tsc.
import path from "node:path";
import fs from "node:fs";
import * as esbuild from "esbuild";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const dist = path.join(root, "dist");
export const SERVERS = ["arxiv", "browser", "code", "file", "markitdown", "terminal"];
export const EXTERNAL = [
  // Chromium's driver reads its injected scripts and protocol files from its package folder
  "playwright-core",
  // loads PDF.js and its worker, and optional converters, by name at run time
  "markitdown-ts",
  // unzipper's S3 source, which agentbox does not use, is an optional package not installed
  "@aws-sdk/client-s3",
  // native addons
  "node-pty",
  "bufferutil",
  "utf-8-validate",
];

/**
 * Programs run from tsc's output in dist/, not from a bundle: the npm packages they import are loaded
 * from node_modules (scripts/runtime-modules.mjs keeps those in the image). The code server's
 * JavaScript driver (servers/code/config.ts `jsDriver`) is one process per session; it resolves the
 * session's own packages from the session's folder, never from a bundle.
 */
export const UNBUNDLED_ENTRIES = ["servers/code/js/driver.js"];

/** Each module keeps its own `import.meta.url`: its file's URL, relative to the bundle it is put in. */
function ownImportMetaUrl(outfile) {
  return {
    name: "own-import-meta-url",
    setup(build) {
      build.onLoad({ filter: /\.js$/ }, async (args) => {
        const text = await fs.promises.readFile(args.path, "utf8");
        if (!args.path.startsWith(dist + path.sep) || !text.includes("import.meta.url")) return undefined;
        const relative = "./" + path.relative(path.dirname(outfile), args.path).split(path.sep).join("/");
        return { contents: text.replaceAll("import.meta.url", `new URL(${JSON.stringify(relative)}, import.meta.url).href`), loader: "js" };
      });
    },
  };
}

/** The tests' fixture servers (test/helpers/hub.ts runs them from here): a test suite starts hundreds. */
function fixtures() {
  const dir = path.join(dist, "test", "fixtures");
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith(".js"))
    .map((name) => [path.join(dir, name), path.join(dist, "bundle", "test", "fixtures", name)]);
}

/** What to bundle: [entry compiled by tsc, its bundle]. */
export const entries = () => [
  [path.join(dist, "hub", "main.js"), path.join(dist, "bundle", "hub", "main.js")],
  ...SERVERS.map((name) => [path.join(dist, "servers", name, "main.js"), path.join(dist, "bundle", "servers", name, "main.js")]),
  ...fixtures(),
];

export async function bundle() {
  await Promise.all(
    entries().map(([entry, outfile]) =>
      esbuild.build({
        entryPoints: [entry],
        outfile,
        bundle: true,
        platform: "node",
        format: "esm",
        target: "node20",
        external: EXTERNAL,
        plugins: [ownImportMetaUrl(outfile)],
        // CommonJS packages inside an ES module still call require() for Node's own modules
        banner: { js: 'import { createRequire as agentboxCreateRequire } from "node:module"; const require = agentboxCreateRequire(import.meta.url);' },
        // whitespace and syntax only: names stay, so a stack trace still says which function
        minifyWhitespace: true,
        minifySyntax: true,
        logLevel: "warning",
      }),
    ),
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) await bundle();

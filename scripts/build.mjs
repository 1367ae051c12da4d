// `npm run build` and the build half of `npm start`: tsc, the playground bundle, the server
// manifest, each run only when its inputs changed since it last succeeded (a content digest kept
// in dist/.build/). A start with nothing changed then costs a few file reads instead of ~15 s of
// tsc, esbuild and starting every server. `--force` rebuilds everything.
// Plain JavaScript: it runs before tsc has compiled anything.
import { spawnSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const stamps = path.join(root, "dist", ".build");
const force = process.argv.includes("--force");

/** Every file under `dir` (recursively) whose absolute path passes `keep`, sorted. */
function filesUnder(dir, keep = () => true) {
  const full = path.join(root, dir);
  if (!fs.existsSync(full)) return [];
  return fs
    .readdirSync(full, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath ?? entry.path, entry.name))
    .filter(keep)
    .sort();
}

/** One digest over the files' paths and contents and any extra strings (versions, settings). */
function digest(files, extra = []) {
  const hash = crypto.createHash("sha256");
  for (const file of files) {
    hash.update(path.relative(root, file)).update("\0");
    hash.update(fs.existsSync(file) ? fs.readFileSync(file) : "(missing)").update("\0");
  }
  for (const text of extra) hash.update(text).update("\0");
  return hash.digest("hex");
}

/** Run `step` unless its inputs' digest is the one recorded after its last success and its outputs exist. */
function step(name, inputs, outputs, run) {
  const stamp = path.join(stamps, `${name}.digest`);
  const now = inputs();
  const before = fs.existsSync(stamp) ? fs.readFileSync(stamp, "utf8") : "";
  if (!force && before === now && outputs.every((o) => fs.existsSync(path.resolve(root, o)))) {
    process.stderr.write(`build: ${name} up to date\n`);
    return;
  }
  run();
  fs.mkdirSync(stamps, { recursive: true });
  fs.writeFileSync(stamp, inputs());
}

function node(args) {
  const result = spawnSync(process.execPath, args, { cwd: root, stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

const isTs = (name) => name.endsWith(".ts");
/** A page's build script and the bundle options it shares with the others (hub/playground/browser-bundle.ts). */
const bundledBy = (room, script) => [path.join(root, "dist", "hub", room, script), path.join(root, "dist", "hub", "playground", "browser-bundle.js")];
const lockAndNode = () => [fs.readFileSync(path.join(root, "package-lock.json"), "utf8"), process.version];

// tsc is incremental, but even with nothing changed it re-reads the whole program (~15 s here)
step(
  "tsc",
  () => digest([...["hub", "servers", "test", "bench"].flatMap((d) => filesUnder(d, isTs)), path.join(root, "tsconfig.json")], lockAndNode()),
  ["dist/hub/main.js", "dist/hub/playground/build.js", "dist/hub/children/manifest.js"],
  () => node([path.join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"]),
);

// the hub and the built-in servers as one file each, so a start does not open ~700 modules (scripts/bundle.mjs)
step(
  "bundle",
  () => {
    const modules = (file) => file.endsWith(".js") && !file.includes(`${path.sep}static${path.sep}`);
    const inputs = ["dist/hub", "dist/servers", "dist/test/fixtures"].flatMap((dir) => filesUnder(dir, modules));
    return digest([...inputs, path.join(root, "scripts", "bundle.mjs")], lockAndNode());
  },
  ["dist/bundle/hub/main.js", "dist/bundle/servers/file/main.js"],
  () => node(["scripts/bundle.mjs"]),
);

step(
  "playground",
  () => digest([...filesUnder("hub/playground/web"), ...bundledBy("playground", "build.js")], lockAndNode()),
  ["dist/hub/playground/static/index.html", "dist/hub/playground/static/app.js", "dist/hub/playground/static/app.css"],
  () => node(["dist/hub/playground/build.js"]),
);

step(
  "live",
  () => digest([...filesUnder("hub/live/web"), ...bundledBy("live", "build.js")], lockAndNode()),
  ["dist/hub/live/static/view.html", "dist/hub/live/static/view.js", "dist/hub/live/static/view.css"],
  () => node(["dist/hub/live/build.js"]),
);

// the live view as an MCP App: one self-contained document (hub/live/app-build.ts)
step(
  "live-app",
  () => digest([...filesUnder("hub/live/web"), ...bundledBy("live", "app-build.js")], lockAndNode()),
  ["dist/hub/live/static/app.html"],
  () => node(["dist/hub/live/app-build.js"]),
);

// how the C helpers are compiled; part of their steps' digests, so a change here rebuilds them
const C_FLAGS = ["-O2", "-Wall", "-Wextra", "-Werror"];
const C_LINK = "-static";

/** Compile one C program into dist/bin/, or say what is missing without it and go on. */
function compileC(source, binary, withoutIt) {
  const compiler = ["cc", "gcc", "clang"].find((name) => spawnSync(name, ["--version"], { stdio: "ignore" }).status === 0);
  if (!compiler) {
    process.stderr.write(`build: no C compiler (cc, gcc or clang): ${binary} not built, so ${withoutIt} (npm run setup installs one)\n`);
    return;
  }
  fs.mkdirSync(path.join(root, "dist", "bin"), { recursive: true });
  const args = [...C_FLAGS, "-o", path.join(root, "dist", "bin", binary), path.join(root, source)];
  // Linked statically: no dynamic loader runs at each start (the reaper starts with every command:
  // 0.2-0.5 ms less per command, bench/README.md), and no LD_PRELOAD or LD_LIBRARY_PATH in the
  // environment it is given loads code into it. Without a static C library, dynamically.
  const linked = spawnSync(compiler, [C_LINK, ...args], { encoding: "utf8" });
  if (linked.status === 0) return;
  const result = spawnSync(compiler, args, { stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
  const why = `${linked.stderr ?? ""}`.trim().split("\n").pop();
  process.stderr.write(`build: ${binary} linked dynamically: static linking failed (${why})\n`);
}

// agentbox-landlock (hub/tenants/network.ts) is C: Landlock is a set of system calls Node cannot make.
// Without a C compiler the hub still runs; a hub with several tenants then says they share the network.
step(
  "landlock",
  () => digest(filesUnder("hub/tenants/landlock"), [C_LINK, ...C_FLAGS]),
  ["dist/bin/agentbox-landlock"],
  () => compileC("hub/tenants/landlock/agentbox-landlock.c", "agentbox-landlock", "tenants will share the network"),
);

// agentbox-reaper (servers/terminal/reaper.ts) is C for the same reason: prctl(PR_SET_CHILD_SUBREAPER).
step(
  "reaper",
  () => digest(filesUnder("servers/terminal/reaper"), [C_LINK, ...C_FLAGS]),
  ["dist/bin/agentbox-reaper"],
  () => compileC("servers/terminal/reaper/agentbox-reaper.c", "agentbox-reaper", "a command's end scans the process table for its leftovers"),
);

// agentbox-launcher (servers/terminal/launcher.ts) starts commands so that the terminal server, a
// Node process, is not forked for each: Node cannot fork anything smaller than itself.
step(
  "launcher",
  () => digest(filesUnder("servers/terminal/launcher"), [C_LINK, ...C_FLAGS]),
  ["dist/bin/agentbox-launcher"],
  () => compileC("servers/terminal/launcher/agentbox-launcher.c", "agentbox-launcher", "the terminal server forks itself for each command"),
);

// the manifest records what the built-in servers list: it changes with their code (compiled, and
// the non-TypeScript files they load), the hub modules that list them, and the AGENTBOX_* settings
// the servers' code names (found in it, so the list keeps itself; a new port or key rebuilds nothing)
const manifestFile = process.env.AGENTBOX_MANIFEST || "dist/manifest.json";
const PER_RUN = /^AGENTBOX_(API_KEY|SESSION.*|HUB_URL|LOG_LEVEL|WORKSPACE|CDP_PORT)$/;
// the playground and the live view (pages and bundles) list no server's tools
const pages = [`${path.sep}hub${path.sep}playground${path.sep}`, `${path.sep}hub${path.sep}live${path.sep}`];
const compiled = (file) => file.endsWith(".js") && !pages.some((dir) => file.includes(dir));
function serverSettings(serverFiles) {
  const names = new Set(serverFiles.flatMap((f) => fs.readFileSync(f, "utf8").match(/AGENTBOX_[A-Z0-9_]+/g) ?? []));
  return JSON.stringify(
    [...names]
      .filter((n) => !PER_RUN.test(n))
      .sort()
      .map((n) => [n, process.env[n] ?? null]),
  );
}
// a manifest written elsewhere (AGENTBOX_MANIFEST) keeps its own record, so it never makes the default one look stale
const manifestStep = process.env.AGENTBOX_MANIFEST ? `manifest-${crypto.createHash("sha256").update(manifestFile).digest("hex").slice(0, 12)}` : "manifest";
step(
  manifestStep,
  () => {
    const serverFiles = filesUnder("dist/servers", compiled);
    return digest(
      [...serverFiles, ...filesUnder("dist/hub", compiled), ...filesUnder("servers", (f) => !isTs(f) && !f.includes("__pycache__"))],
      [...lockAndNode(), manifestFile, serverSettings(serverFiles)],
    );
  },
  [manifestFile],
  () => node(["dist/hub/children/manifest.js"]),
);

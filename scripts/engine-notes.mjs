// Run by scripts/setup.sh: checks this Node against package.json's "engines", and turns npm's
// EBADENGINE warnings (five lines a package) into one explained line. Every package agentbox runs
// with supports Node 20.16+; some development-only ones (kubernetes-models, and what the MCP
// conformance suite pulls in) declare Node 22, yet do what the tests ask of them on Node 20, and
// the conformance suite itself runs on a Node 22 that test/helpers/node22.ts fetches.
//   node scripts/engine-notes.mjs check          exit 1 with a message when this Node is too old
//   node scripts/engine-notes.mjs explain <log>  summarize the EBADENGINE lines of npm's output
import fs from "node:fs";
import path from "node:path";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const [major, minor] = process.versions.node.split(".").map(Number);

if (process.argv[2] === "check") {
  const range = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).engines.node;
  // the range is "^20.16.0 || >=22.3.0": pdf.js (document conversion) needs those, nothing needs more
  const supported = (major === 20 && minor >= 16) || (major === 22 && minor >= 3) || major > 22;
  if (!supported) {
    process.stderr.write(
      `agentbox setup: Node ${process.version} is not supported (package.json engines: ${range}). Install Node 22 (nvm install 22, or the node:22 image) and run npm run setup again.\n`,
    );
    process.exit(1);
  }
} else if (process.argv[2] === "explain") {
  const log = fs.readFileSync(process.argv[3], "utf8");
  const names = [...new Set([...log.matchAll(/EBADENGINE\s+package: '(@?[^@']+)@[^']*'/g)].map((m) => m[1]))];
  if (names.length) {
    const lock = JSON.parse(fs.readFileSync(path.join(root, "package-lock.json"), "utf8")).packages ?? {};
    const isDev = (name) => Object.entries(lock).some(([where, entry]) => where.endsWith(`node_modules/${name}`) && entry.dev);
    const dev = names.filter(isDev);
    const runtime = names.filter((n) => !isDev(n));
    if (dev.length) {
      process.stdout.write(
        `agentbox setup: on Node ${process.version}, npm warns that ${dev.length} development-only packages declare a newer Node (${dev.join(", ")}). ` +
          `They are used only by tests and benchmarks, and do what those ask of them on Node 20; the MCP conformance suite runs on a Node 22 it fetches itself. ` +
          `Nothing agentbox runs with is affected; with Node 22 the warning goes away.\n`,
      );
    }
    // a package the hub runs with is another matter: show npm's own words
    if (runtime.length) process.stderr.write(`agentbox setup: warning: packages agentbox runs with need another Node: ${runtime.join(", ")}\n${log}`);
  }
} else {
  process.stderr.write("usage: node scripts/engine-notes.mjs check | explain <npm-log>\n");
  process.exit(2);
}

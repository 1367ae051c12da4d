#!/usr/bin/env node
// Record what the container costs: the image's size, what each of its parts weighs, and the time
// from `docker run` to a ready hub (/readyz 200, every child server started), over a few cold
// starts of a fresh container.
//
//   node bench/docker.mjs [--image agentbox] [--runs 3] [--out bench/results/docker.json]
//
// Needs a running Docker engine and a built image (bash docker/ci.sh does both). Host networking
// only, the hub on a free loopback port.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { docker, imageSize, removeContainer, startContainer, stopContainer, waitReady } from "../docker/container.mjs";

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
}
const image = arg("--image", "agentbox");
const runs = Number(arg("--runs", "3"));
const out = arg("--out", "bench/results/docker.json");

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * What each part of the image weighs, read inside it (`du`, bytes of the files): the parts an operator
 * pays for when the image is pulled, and "everything else" (the Debian base, the small packages).
 * Shared libraries are a part of their own: Chromium's and Python's are among them, and one library
 * can serve both.
 */
const PARTS = [
  ["Chromium (headless shell)", ["/usr/lib/chromium"]],
  ["shared libraries (Chromium's, Python's, the system's)", ["/usr/lib/x86_64-linux-gnu"]],
  ["Python 3.11 with numpy, pandas, matplotlib and pip", ["/usr/lib/python3", "/usr/lib/python3.11", "/usr/share/matplotlib"]],
  ["Node (the binary)", ["/usr/local/bin/node"]],
  ["npm and corepack (agents install packages with them)", ["/usr/local/lib/node_modules"]],
  ["fonts (Latin, CJK)", ["/usr/share/fonts"]],
  ["git", ["/usr/lib/git-core", "/usr/bin/git"]],
  ["agentbox: node_modules (what runs outside the bundles)", ["/app/node_modules"]],
  ["agentbox: dist (the bundles, the pages, tsc's output)", ["/app/dist"]],
];

async function imageParts(image) {
  const paths = ["/", ...PARTS.flatMap(([, of]) => of)];
  // one du per path: a single du counts what it has seen once, so a path inside "/" would read as empty
  const out = await docker(["run", "--rm", "--network", "host", "--entrypoint", "sh", image, "-c", 'for at in "$@"; do du -sxb "$at"; done', "du", ...paths]);
  const bytes = Object.fromEntries(
    out
      .split("\n")
      .map((line) => line.split("\t"))
      .map(([size, at]) => [at, Number(size)]),
  );
  const parts = PARTS.map(([part, of]) => ({ part, paths: of.join(" "), MB: Math.round(of.reduce((sum, at) => sum + (bytes[at] ?? 0), 0) / 1e6) }));
  const rest = Math.round(bytes["/"] / 1e6) - parts.reduce((sum, p) => sum + p.MB, 0);
  return [...parts, { part: "everything else (the Debian base, small packages)", paths: "", MB: rest }];
}
const round = (x) => Math.round(x);

async function main() {
  const bytes = await imageSize(image);
  const base = await imageSize("node:22-bookworm-slim").catch(() => null);
  // The biggest layers say where the size goes (Chromium + Python stack, node_modules, ...).
  // (json quoting keeps a multi-line RUN on one line)
  const layers = (await docker(["history", "--no-trunc", "--format", "{{.Size}}\t{{json .CreatedBy}}", image]))
    .split("\n")
    .map((line) => line.split("\t"))
    .filter(([size]) => /GB|MB/.test(size))
    .map(([size, by]) => ({ size, createdBy: JSON.parse(by).replace(/\s+/g, " ").slice(0, 160) || "(base image node:22-bookworm-slim)" }));

  const parts = await imageParts(image);

  const readyMs = [];
  const stopMs = [];
  for (let i = 0; i < runs; i++) {
    const container = await startContainer({ image, env: { AGENTBOX_RATE_LIMITS: "off" } });
    try {
      readyMs.push(await waitReady(container));
      const stop = await stopContainer(container);
      if (stop.exitCode !== 0) throw new Error(`run ${i + 1}: exit code ${stop.exitCode} after docker stop`);
      stopMs.push(stop.stopMs);
    } finally {
      await removeContainer(container);
    }
    console.log(`run ${i + 1}: ready ${(readyMs.at(-1) / 1000).toFixed(2)} s, stop ${(stopMs.at(-1) / 1000).toFixed(2)} s`);
  }

  const result = {
    date: new Date().toISOString(),
    image,
    // the 2 cores are shared with other builds: the load says how much the times below are worth
    machine: {
      cpus: os.cpus().length,
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      dockerServer: await docker(["version", "-f", "{{.Server.Version}}"]),
      loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
    },
    imageBytes: bytes,
    imageMB: round(bytes / 1e6),
    // issue 16: every node pulls the image; 1,957 MB before stand-in packages kept LLVM, sympy, perl and Tk out
    imageTargetMB: 1000,
    baseImageMB: base === null ? null : round(base / 1e6),
    largestLayers: layers,
    imageParts: parts,
    runToReadyMs: { runs: readyMs.map(round), median: round(median(readyMs)), min: round(Math.min(...readyMs)), max: round(Math.max(...readyMs)) },
    dockerStopMs: { runs: stopMs.map(round), median: round(median(stopMs)) },
    notes:
      "docker run -d --network host to /readyz 200 (all six built-in servers listed; each starts on its first call); fresh container each run, image already built.",
  };
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify(result, null, 2) + "\n");
  console.log(`image ${result.imageMB} MB; run to ready median ${(result.runToReadyMs.median / 1000).toFixed(2)} s over ${runs} runs; written to ${out}`);
}

main().catch((err) => {
  console.error(`docker benchmark failed: ${err?.stack ?? err}`);
  process.exitCode = 1;
});

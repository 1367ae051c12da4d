#!/usr/bin/env node
// Run the router in the foreground on this machine, with Debian's nginx: for trying replicas out,
// for the tests (test/deploy/nginx.test.ts) and for the container test (docker/smoke.mjs).
//
//   node deploy/nginx/run.mjs --listen 127.0.0.1:8080 --replica r1=127.0.0.1:8081 --replica r2=127.0.0.1:8082
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { renderNginx } from "./render.mjs";

const NGINX_CANDIDATES = ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"];

/** The nginx binary (`npm run setup` installs Debian's nginx-light when there is none). */
export function ensureNginx() {
  const found = NGINX_CANDIDATES.find((p) => fs.existsSync(p));
  if (found) return found;
  throw new Error(`nginx is not installed (looked for ${NGINX_CANDIDATES.join(", ")}): run npm run setup, or apt-get install nginx-light`);
}

/** A port free on the loopback right now. */
export async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Render the shipped config for these replicas and run nginx on it (its own prefix, daemon off),
 * resolving once it answers. `stop()` ends it and removes its files.
 * @param {{ listen?: string, replicas: Array<{ name: string, address: string }> }} options
 *   listen defaults to a free loopback port
 */
export async function startRouter({ listen, replicas }) {
  listen ??= `127.0.0.1:${await freePort()}`;
  const nginx = ensureNginx();
  const prefix = fs.mkdtempSync(path.join(os.tmpdir(), "agentbox-nginx-"));
  // nginx started as root runs its workers as nobody, who must reach the temp folders it makes
  fs.chmodSync(prefix, 0o755);
  const conf = path.join(prefix, "nginx.conf");
  fs.writeFileSync(conf, renderNginx({ listen, replicas, prefix, workers: "1" }));
  const proc = spawn(nginx, ["-p", prefix, "-c", conf, "-e", path.join(prefix, "error.log"), "-g", "daemon off;"], { stdio: ["ignore", "inherit", "inherit"] });
  const exited = new Promise((resolve) => proc.once("exit", resolve));
  const port = listen.slice(listen.lastIndexOf(":") + 1);
  const origin = `http://127.0.0.1:${port}`;
  const errorLog = () => (fs.existsSync(path.join(prefix, "error.log")) ? fs.readFileSync(path.join(prefix, "error.log"), "utf8") : "");
  for (let attempt = 0; ; attempt++) {
    if (proc.exitCode !== null) throw new Error(`nginx exited with ${proc.exitCode}:\n${errorLog()}`);
    try {
      if ((await fetch(`${origin}/router/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (attempt > 300) throw new Error(`nginx did not answer on ${origin}:\n${errorLog()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    origin,
    errorLog,
    async stop() {
      if (proc.exitCode === null) {
        proc.kill("SIGTERM");
        await exited;
      }
      fs.rmSync(prefix, { recursive: true, force: true });
    },
  };
}

// run as a script (by any path to it: a symlinked checkout too), not imported
if (process.argv[1] && import.meta.url === pathToFileURL(fs.realpathSync(process.argv[1])).href) {
  const { values } = parseArgs({ options: { listen: { type: "string", default: "127.0.0.1:8080" }, replica: { type: "string", multiple: true, default: [] } } });
  const replicas = values.replica.map((spec) => ({ name: spec.split("=")[0], address: spec.split("=").slice(1).join("=") }));
  const router = await startRouter({ listen: values.listen, replicas });
  process.stdout.write(`router on ${router.origin} for ${replicas.map((r) => r.name).join(", ")}; Ctrl-C stops it\n`);
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => void router.stop().then(() => process.exit(0)));
}

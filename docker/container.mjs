// Start, watch and stop an agentbox container, shared by the smoke test and the benchmark.
// Always host networking: the container reaches the host's loopback stand-ins and the hub
// listens on a free host port (AGENTBOX_PORT); no other network is ever created or used.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { freePort } from "../deploy/nginx/run.mjs";

// A port free on the host's loopback right now (the container binds it with host networking).
export { freePort };

const run = promisify(execFile);

export async function docker(args, { allowFail = false } = {}) {
  try {
    const { stdout } = await run("docker", args, { maxBuffer: 64 * 1024 * 1024 });
    return stdout.trim();
  } catch (err) {
    if (allowFail) return null;
    const detail = (err.stderr || err.message || "").toString().trim();
    throw new Error(`docker ${args.join(" ")} failed: ${detail}`, { cause: err });
  }
}

/**
 * `docker run -d --network host` the image with the hub on a free port (loopback only).
 * Returns { id, origin, startedAt }; startedAt is taken just before `docker run`.
 */
export async function startContainer({ image = "agentbox", env = {}, args = [] } = {}) {
  const port = await freePort();
  const envArgs = Object.entries({ AGENTBOX_HOST: "127.0.0.1", AGENTBOX_PORT: String(port), ...env }).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
  const startedAt = performance.now();
  const id = await docker(["run", "-d", "--network", "host", ...envArgs, ...args, image]);
  return { id, origin: `http://127.0.0.1:${port}`, startedAt };
}

/** Poll /readyz until 200; returns ms since `startedAt`. Fails early if the container exits. */
export async function waitReady(container, timeoutMs = 120_000) {
  const deadline = performance.now() + timeoutMs;
  let last = "no answer yet";
  let polls = 0;
  while (performance.now() < deadline) {
    try {
      const res = await fetch(`${container.origin}/readyz`, { signal: AbortSignal.timeout(2000) });
      last = `HTTP ${res.status} ${await res.text()}`;
      if (res.ok) return performance.now() - container.startedAt;
    } catch (err) {
      last = String(err?.cause?.code ?? err?.message ?? err);
    }
    // checking the container's state costs a docker call: every 10th poll is enough
    if (++polls % 10 === 0 && (await docker(["inspect", "-f", "{{.State.Running}}", container.id])) !== "true") {
      throw new Error(`container exited before it was ready (last /readyz: ${last})\n${tail(await logs(container))}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`container not ready after ${timeoutMs} ms (last /readyz: ${last})\n${tail(await logs(container))}`);
}

/** The last lines of a log, enough to see why without flooding the report. */
export function tail(text, lines = 30) {
  return text.trimEnd().split("\n").slice(-lines).join("\n");
}

export async function logs(container) {
  try {
    const { stdout, stderr } = await run("docker", ["logs", container.id], { maxBuffer: 64 * 1024 * 1024 });
    return stdout + stderr;
  } catch (err) {
    return `(docker logs failed: ${err.message})`;
  }
}

/**
 * `docker stop` (SIGTERM, SIGKILL after `graceSeconds`) and report how it ended:
 * { exitCode, oomKilled, stopMs, logs }. The container is removed afterwards.
 */
export async function stopContainer(container, graceSeconds = 10) {
  const t0 = performance.now();
  await docker(["stop", "-t", String(graceSeconds), container.id]);
  const stopMs = performance.now() - t0;
  const [exitCode, oomKilled] = (await docker(["inspect", "-f", "{{.State.ExitCode}} {{.State.OOMKilled}}", container.id])).split(" ");
  const output = await logs(container);
  await docker(["rm", "-f", container.id], { allowFail: true });
  return { exitCode: Number(exitCode), oomKilled: oomKilled === "true", stopMs, logs: output };
}

/** Remove a container whatever its state (cleanup after a failure). */
export async function removeContainer(container) {
  if (container?.id) await docker(["rm", "-f", container.id], { allowFail: true });
}

/** The image's size in bytes as docker reports it (all layers, base included). */
export async function imageSize(image = "agentbox") {
  return Number(await docker(["image", "inspect", "-f", "{{.Size}}", image]));
}

// The container smoke test's run of docs/deploy.md's `docker run` with a key, a host folder and the
// host user's ids, as root on the host types it (run by docker/smoke.mjs):
//   docker run --rm -p 8080:8080 -e AGENTBOX_API_KEY=secret \
//     -v "$PWD/work:/workspace" -e AGENTBOX_UID=$(id -u) -e AGENTBOX_GID=$(id -g) agentbox
// with host networking and a free port in place of -p 8080:8080 (CI's engine has no bridge). For
// root, $(id -u) and $(id -g) are 0: the container starts anyway (agents never run as root; agent keeps
// its ids), says so in its log, refuses a client without the key and writes the host folder.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { logs, removeContainer, startContainer, stopContainer, tail, waitReady } from "./container.mjs";

/** @param {{ image: string, check: Function, expect: Function, connect: Function, callOk: Function, textOf: Function }} t */
export async function phaseRootHostUser({ image, check, expect, connect, callOk, textOf }) {
  // "$PWD/work" of root: a folder root owns, as `docker run -v` makes it when it is not there yet
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "agentbox-smoke-work-"));
  fs.chmodSync(work, 0o755);
  const container = await startContainer({
    image,
    env: { AGENTBOX_RATE_LIMITS: "off", AGENTBOX_API_KEY: "secret", AGENTBOX_UID: "0", AGENTBOX_GID: "0" },
    args: ["-v", `${work}:/workspace`],
  });
  let client;
  try {
    let ready = false;
    await check("docs' docker run as root (AGENTBOX_UID=0, AGENTBOX_GID=0, a key, a host folder): ready, and says agent keeps its ids", async () => {
      await waitReady(container);
      ready = true;
      const out = await logs(container);
      expect(/AGENTBOX_UID=0 \(root\) is ignored/.test(out), `the log does not say AGENTBOX_UID=0 is ignored:\n${tail(out)}`);
    });
    if (!ready) return;
    await check("docs' docker run as root: no key, 401; with it, files land in the host folder, written by agent (not root)", async () => {
      const refused = await fetch(`${container.origin}/mcp`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(refused.status === 401, `without the key: HTTP ${refused.status}`);
      client = await connect(container.origin, "/mcp", { Authorization: "Bearer secret" });
      await callOk(client, "file_write", { path: "hello.txt", content: "from the container" });
      const res = await callOk(client, "terminal_exec", { command: "id -u" });
      const uid = Number((res.structuredContent?.stdout ?? textOf(res)).trim());
      expect(uid !== 0, "the agent's command ran as root");
      const written = fs.statSync(path.join(work, "hello.txt"));
      expect(written.uid === uid, `on the host the file belongs to ${written.uid}, the agent ran as ${uid}`);
    });
    await client?.close();
    client = undefined;
    await check("docs' docker run as root: docker stop: clean exit", async () => {
      const stop = await stopContainer(container);
      expect(stop.exitCode === 0, `exit code ${stop.exitCode}\n${tail(stop.logs)}`);
    });
  } finally {
    await client?.close().catch(() => {});
    await removeContainer(container);
    fs.rmSync(work, { recursive: true, force: true });
  }
}

// The container smoke test's deployment phases (issue 16), run by docker/smoke.mjs:
//  - `docker run --read-only --tmpfs /tmp -v VOLUME:/workspace`: every kind of server still works;
//  - two containers (AGENTBOX_REPLICA c1 and c2, host networking, loopback ports) behind nginx with
//    the shipped config (deploy/nginx): sessions keep their state, killing one container breaks only
//    its sessions (404, session not found), and a new session lands on the other.
import { startRouter } from "../deploy/nginx/run.mjs";
import { docker, removeContainer, startContainer, stopContainer, tail, waitReady } from "./container.mjs";

/**
 * @param {{ image: string, fixtures: any, check: Function, expect: Function, connect: Function,
 *   callOk: Function, textOf: Function }} t the smoke test's runner and MCP helpers
 */
export async function phaseReadOnly({ image, fixtures, check, expect, connect, callOk, textOf }) {
  const volume = `agentbox-smoke-ro-${process.pid}`;
  const container = await startContainer({
    image,
    env: { AGENTBOX_RATE_LIMITS: "off" },
    args: ["--read-only", "--tmpfs", "/tmp", "-v", `${volume}:/workspace`],
  });
  let client;
  try {
    let ready = false;
    await check("read-only root (--read-only --tmpfs /tmp -v VOLUME:/workspace): ready", async () => {
      const ms = await waitReady(container);
      ready = true;
      return `${(ms / 1000).toFixed(1)} s`;
    });
    if (!ready) return;
    client = await connect(container.origin);
    await check("read-only: files, a command, Chromium and a matplotlib plot all work", async () => {
      await callOk(client, "file_write", { path: "ro/note.txt", content: "on a volume" });
      expect(textOf(await callOk(client, "file_read", { path: "ro/note.txt" })).includes("on a volume"), "file_read lost the note");
      const res = await callOk(client, "terminal_exec", { command: "touch /usr/probe 2>/dev/null && echo writable || echo read-only" });
      expect((res.structuredContent?.stdout ?? textOf(res)).includes("read-only"), `the root file system is writable: ${textOf(res)}`);
      await callOk(client, "browser_navigate", { url: fixtures.pageUrl });
      const plot = await callOk(client, "code_execute", {
        language: "python",
        code: "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.savefig('/workspace/ro/plot.png')\nimport os\nos.path.getsize('/workspace/ro/plot.png') > 1000",
      });
      expect(/^True$/m.test(textOf(plot)), `the plot was not written:\n${textOf(plot)}`);
    });
    await client.close();
    client = undefined;
    await check("read-only: docker stop: clean exit", async () => {
      const stop = await stopContainer(container);
      expect(stop.exitCode === 0, `exit code ${stop.exitCode}\n${tail(stop.logs)}`);
    });
  } finally {
    await client?.close().catch(() => {});
    await removeContainer(container);
    await docker(["volume", "rm", "-f", volume], { allowFail: true });
  }
}

export async function phaseReplicas({ image, check, expect, connect, callOk, textOf }) {
  const names = ["c1", "c2"];
  const containers = [];
  let router;
  const sessions = [];
  try {
    for (const name of names) {
      containers.push(await startContainer({ image, env: { AGENTBOX_RATE_LIMITS: "off", AGENTBOX_REPLICA: name } }));
    }
    let up = false;
    await check("replicas: two containers behind nginx (deploy/nginx) are ready", async () => {
      await Promise.all(containers.map((c) => waitReady(c)));
      router = await startRouter({ replicas: containers.map((c, i) => ({ name: names[i], address: new URL(c.origin).host })) });
      up = true;
    });
    if (!up) return;
    const replicaOf = async (client) => (await callOk(client, "hub_status", {})).structuredContent?.replica;

    await check("replicas: sessions spread over both and keep their state across calls", async () => {
      const per = { c1: 0, c2: 0 };
      for (let i = 0; sessions.length < 6 || per.c1 < 2 || per.c2 < 2; i++) {
        expect(i < 60, `60 keys did not reach both replicas twice: ${JSON.stringify(per)}`);
        const key = `agent-${i}`;
        const client = await connect(router.origin, "/mcp", { Authorization: `Bearer ${key}` });
        const replica = await replicaOf(client);
        await callOk(client, "file_write", { path: `${key}.txt`, content: `${key} on ${replica}` });
        sessions.push({ key, client, replica });
        per[replica]++;
      }
      for (const s of sessions) {
        const read = textOf(await callOk(s.client, "file_read", { path: `${s.key}.txt` }));
        expect(read.includes(`${s.key} on ${s.replica}`), `${s.key}'s session lost its file: ${read.slice(0, 200)}`);
      }
      return JSON.stringify(per);
    });

    await check("replicas: killing one breaks only its sessions (404), new sessions land on the other", async () => {
      await docker(["kill", containers[1].id]);
      for (const s of sessions) {
        if (s.replica === "c2") {
          const err = await s.client.callTool({ name: "file_read", arguments: { path: `${s.key}.txt` } }).then(
            () => undefined,
            (e) => e,
          );
          expect(err?.code === 404 && /Session not found/.test(err.message), `a lost session's call gave: ${err?.message ?? "a result"}`);
        } else {
          await callOk(s.client, "file_read", { path: `${s.key}.txt` });
        }
      }
      const victim = sessions.find((s) => s.replica === "c2");
      const again = await connect(router.origin, "/mcp", { Authorization: `Bearer ${victim.key}` });
      sessions.push({ client: again });
      const replica = await replicaOf(again);
      expect(replica === "c1", `the new session landed on ${replica}`);
    });
  } finally {
    await Promise.allSettled(sessions.map((s) => s.client.close()));
    await router?.stop();
    for (const c of containers) await removeContainer(c);
  }
}

// The container smoke test's isolation phases (issue 13), run by docker/smoke.mjs:
//  - `docker run` with Docker's default capabilities and two tenants (AGENTBOX_TENANTS): each
//    tenant's commands run under a uid of its own, neither root nor the other's, and one cannot
//    read the other's files or kill the hub, nor connect to a service the other listens on;
//  - `--cap-drop ALL --user agent` with two tenants: refused at once with a message saying what to
//    change (one tenant only where the hub cannot switch users).
import { randomBytes } from "node:crypto";
import { docker, logs, removeContainer, startContainer, tail, waitReady } from "./container.mjs";

const shOut = (res, textOf) => res.structuredContent?.stdout ?? textOf(res);

/** @param {{ image: string, check: Function, expect: Function, connect: Function, callOk: Function, textOf: Function }} t */
export async function phaseTenants({ image, check, expect, connect, callOk, textOf }) {
  const keyA = `a-${randomBytes(12).toString("hex")}`;
  const keyB = `b-${randomBytes(12).toString("hex")}`;
  const container = await startContainer({
    image,
    env: { AGENTBOX_RATE_LIMITS: "off", AGENTBOX_TENANTS: `alice:${keyA},bob:${keyB}` },
    args: [],
  });
  const clients = [];
  try {
    let ready = false;
    await check("two tenants (default capabilities): ready, isolation by uid", async () => {
      await waitReady(container);
      ready = true;
      const status = await (await fetch(`${container.origin}/`, { headers: { Authorization: `Bearer ${keyA}` } })).json();
      expect(status.isolation?.mode === "uid", `isolation: ${JSON.stringify(status.isolation)}`);
    });
    if (!ready) return;
    const alice = await connect(container.origin, "/mcp", { Authorization: `Bearer ${keyA}` });
    const bob = await connect(container.origin, "/mcp", { Authorization: `Bearer ${keyB}` });
    clients.push(alice, bob);
    await check("two tenants: each runs under its own uid, not root, with its own workspace", async () => {
      const a = shOut(await callOk(alice, "terminal_exec", { command: "id -u; pwd" }), textOf)
        .trim()
        .split("\n");
      const b = shOut(await callOk(bob, "terminal_exec", { command: "id -u; pwd" }), textOf)
        .trim()
        .split("\n");
      expect(a[0] !== b[0] && a[0] !== "0" && b[0] !== "0", `uids: alice ${a[0]}, bob ${b[0]}`);
      expect(a[1] === "/workspace/alice" && b[1] === "/workspace/bob", `workspaces: ${a[1]}, ${b[1]}`);
    });
    await check("two tenants: alice cannot read bob's files, read the config or kill the hub", async () => {
      await callOk(bob, "file_write", { path: "secret.txt", content: "bob only" });
      const probe = await alice.callTool({
        name: "terminal_exec",
        arguments: {
          command:
            "cat /workspace/bob/secret.txt; cat /etc/agentbox/* ; kill -9 1 $(pgrep -f dist/bundle/hub/main.js); env | grep -c -e AGENTBOX_TENANTS -e AGENTBOX_API_KEY; true",
        },
      });
      const out = textOf(probe);
      expect(!out.includes("bob only"), `alice read bob's file:\n${out}`);
      expect(/Permission denied/.test(out) && /Operation not permitted/.test(out), `expected refusals:\n${out}`);
      expect(!out.includes(keyB) && !out.includes(keyA), "a key was readable");
      expect((await fetch(`${container.origin}/healthz`)).ok, "the hub died");
    });
    await check("two tenants: alice's curl reaches none of bob's listener's addresses; bob's own does", async () => {
      const status = await (await fetch(`${container.origin}/`, { headers: { Authorization: `Bearer ${keyB}` } })).json();
      expect(status.isolation?.network === "isolated", `network: ${JSON.stringify(status.isolation)}`);
      const port = Number(/^(\d+)-/.exec(status.isolation.ports ?? "")?.[1]);
      const session = await callOk(bob, "terminal_session_create", {});
      // every address at once: a dual-stack wildcard listener, as a dev server started with --host often is
      await callOk(bob, "terminal_session_send", {
        id: session.structuredContent.id,
        input: `python3 -m http.server ${port} --bind ::\n`,
        waitFor: "Serving HTTP",
        timeoutMs: 20_000,
      });
      const curl = (address) => `curl -sS -m 5 -o /dev/null -w '${address} %{http_code}\\n' http://${address}:${port}/ 2>&1`;
      const own = shOut(await callOk(bob, "terminal_exec", { command: curl("127.0.0.1") }), textOf);
      expect(/127\.0\.0\.1 200/.test(own), `bob's own curl: ${own}`);
      const probe = await alice.callTool({
        name: "terminal_exec",
        arguments: { command: `${["127.0.0.1", "127.0.0.2", "[::1]", "[::ffff:127.0.0.1]"].map(curl).join("; ")}; true` },
      });
      const out = textOf(probe);
      expect(!/ 200/.test(out), `alice reached bob's listener:\n${out}`);
      expect((out.match(/Permission denied|Failed to connect|Couldn't connect/g) ?? []).length >= 4, `expected four refusals:\n${out}`);
    });
  } finally {
    for (const c of clients) await c.close().catch(() => {});
    await removeContainer(container);
  }

  await check("--cap-drop ALL --user agent with two tenants: refused with what to change", async () => {
    const name = `agentbox-smoke-tenants-nocaps-${process.pid}`;
    try {
      await docker([
        "run",
        "-d",
        "--name",
        name,
        "--network",
        "host",
        "--cap-drop",
        "ALL",
        "--user",
        "agent",
        "-e",
        "AGENTBOX_HOST=127.0.0.1",
        "-e",
        "AGENTBOX_PORT=1",
        "-e",
        `AGENTBOX_TENANTS=alice:${keyA},bob:${keyB}`,
        image,
        "--port",
        "1",
      ]);
      const deadline = Date.now() + 30_000;
      while ((await docker(["inspect", "-f", "{{.State.Running}}", name])) === "true") {
        expect(Date.now() < deadline, `still running 30 s after docker run:\n${tail(await logs({ id: name }))}`);
        await new Promise((r) => setTimeout(r, 250));
      }
      const out = await logs({ id: name });
      expect(/Several tenants need the hub to run each one under its own uid/.test(out), `unexpected output:\n${out}`);
    } finally {
      await docker(["rm", "-f", name], { allowFail: true });
    }
  });
}

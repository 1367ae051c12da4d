// A tenant must never get the hub's port, and with it the keys its clients send: not on the other
// loopback family while the hub runs, not by a daemon waiting for the hub to stop, not by a
// process left from an earlier run when the hub starts again.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import net from "node:net";
import { describe, test } from "node:test";
import { isAlive } from "../../../servers/lib/proc-table.js";
import { derivedUid } from "../../../hub/tenants/tenants.js";
import { call, startHub, tempDir, textOf } from "../../helpers/hub.js";
import { execEscaping } from "../../helpers/processes.js";
import { until } from "../../helpers/wait.js";

const asRoot = process.getuid?.() === 0;
const hasIpv6Loopback = await new Promise<boolean>((resolve) => {
  const probe = net.createServer().once("error", () => resolve(false));
  probe.listen({ host: "::1", port: 0 }, () => probe.close(() => resolve(true)));
});

/** A Python program that binds the port (on host, IPv6 only for ::1) as soon as it can, and serves it. */
const squatter = (host: string, port: number) =>
  [
    "import socket, time",
    `family = socket.AF_INET6 if ":" in "${host}" else socket.AF_INET`,
    "while True:",
    "    s = socket.socket(family)",
    "    if family == socket.AF_INET6: s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)",
    "    try:",
    `        s.bind(("${host}", ${port})); s.listen(); print("bound", flush=True); break`,
    "    except OSError as e:",
    "        print(e.strerror, flush=True); s.close(); time.sleep(0.05)",
    "time.sleep(3600)",
  ].join("\n");

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen({ host: "127.0.0.1", port: 0 }, () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });

const healthy = async (url: string) => (await fetch(url).catch(() => undefined))?.ok === true;

describe("the hub owns its port", () => {
  test(
    "on 127.0.0.1 it holds [::1] too: a command cannot bind it, and clients of ::1 reach the hub",
    { skip: hasIpv6Loopback ? false : "no IPv6 loopback" },
    async () => {
      const hub = await startHub({ servers: ["terminal"] });
      try {
        const port = Number(new URL(hub.origin).port);
        const client = await hub.connect();
        const attempt = textOf(
          await call(client, "terminal_exec", { command: `timeout 2 /usr/bin/python3 -c '${squatter("::1", port)}' | head -1`, timeoutMs: 10_000 }),
        );
        assert.doesNotMatch(attempt, /bound/, "a tenant's command took [::1] on the hub's port");
        assert.match(attempt, /Address already in use/);
        assert.ok(await healthy(`http://[::1]:${port}/healthz`), "the hub answers on [::1]");
      } finally {
        await hub.stop();
      }
    },
  );

  const rootOnly = { skip: asRoot ? false : "needs root: tenants have uids of their own only then" };

  test("a daemon of a live session waiting for the port dies with the hub", rootOnly, async () => {
    const port = await freePort();
    const hub = await startHub({ servers: ["terminal"], port });
    let waiting: number;
    try {
      const client = await hub.connect();
      const started = await execEscaping(
        client,
        `env -i AGENTBOX_SESSION=$AGENTBOX_SESSION PATH=$PATH setsid /usr/bin/python3 -c '${squatter("127.0.0.1", port)}' >/dev/null 2>&1 </dev/null & echo $!`,
      );
      waiting = Number(started.trim());
      assert.ok(isAlive(waiting), "the daemon of a live session runs");
    } finally {
      await hub.stop();
    }
    await until("the tenant's daemon to die with the hub", () => !isAlive(waiting), 5_000);
  });

  test("a tenant's process left from an earlier run on the port is killed before the hub binds", rootOnly, async () => {
    // the keyless tenant's uid, derived from its name and workspace, as the hub will derive it
    const workspace = tempDir("agentbox-ws-");
    const port = await freePort();
    const uid = derivedUid("default", workspace);
    // what a crash of the hub (or an older version) would have left: a tenant process on the port
    const leftover = spawn("setpriv", [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", "/usr/bin/python3", "-c", squatter("127.0.0.1", port)], {
      stdio: ["ignore", "pipe", "ignore"],
      detached: true,
    });
    try {
      await new Promise<void>((resolve, reject) => {
        leftover.stdout!.on("data", (d: Buffer) => d.includes("bound") && resolve());
        leftover.once("exit", (code) => reject(new Error(`the leftover could not start (exit ${code})`)));
      });
      const hub = await startHub({ servers: ["terminal"], workspace, port });
      try {
        assert.ok(
          hub.logs.some((l) => /killed tenant processes left by an earlier run/.test(l)),
          "the hub says what it killed",
        );
        await until("the leftover to be gone", () => leftover.signalCode !== null, 5_000);
        assert.ok(await healthy(`http://127.0.0.1:${port}/healthz`), "the restarted hub serves its port");
      } finally {
        await hub.stop();
      }
    } finally {
      leftover.kill("SIGKILL");
    }
  });
});

// A child that dies mid-call: a clean error at once, a restart, list_changed, and calls work again.
// On shutdown, no process is left behind.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { descendantsOf, isAlive } from "../../../servers/lib/proc-table.js";
import { call, fixture, startHub, textOf } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";

const alive = isAlive;
const descendants = (pid: number) => descendantsOf(pid).map((p) => p.pid);

describe("supervision", () => {
  test("a crash mid-call fails that call clearly, the child restarts with its tools still listed, calls work again", async () => {
    const hub = await startHub({ extraServers: { echo: fixture("echo-server"), steady: { ...fixture("echo-server"), prefix: "steady" } } });
    try {
      const client = await hub.connect();
      const status = async () => (await (await fetch(hub.origin + "/")).json()).servers.find((s: { name: string }) => s.name === "echo");
      const pidBefore = (await status()).pid;

      const result = await call(client, "echo_crash");
      assert.equal(result.isError, true);
      assert.match(textOf(result), /'echo' server exited while running echo_crash.*restarted/);
      // the dead process's pid names nothing of the server any more: not shown, not spared by the sweep
      assert.notEqual((await status()).pid, pidBefore);
      // while it restarts its tools stay listed, and a call hears why it cannot run, never "Unknown tool"
      assert.ok((await client.listTools()).tools.some((t) => t.name === "echo_echo"));
      const during = await call(client, "echo_echo", { text: "during" });
      if (during.isError) assert.match(textOf(during), /'echo' server is restarting.*try again/);
      else assert.equal(textOf(during), "during");

      // the other child and the hub keep serving while echo is down
      assert.equal(textOf(await call(client, "steady_echo", { text: "still here" })), "still here");
      await until("the restart", async () => {
        const s = await status();
        return s.state === "ready" && s.pid !== pidBefore;
      });
      assert.equal((await status()).restarts, 1);
      assert.ok(!alive(pidBefore));
      assert.equal(textOf(await call(client, "echo_echo", { text: "back" })), "back");
      const metrics = await (await fetch(hub.origin + "/metrics")).text();
      assert.match(metrics, /agentbox_child_restarts_total\{server="echo"\} 1/);
    } finally {
      await hub.stop();
    }
  });

  test("calls to a child that is down fail at once with a message, not a hang", async () => {
    const hub = await startHub({ extraServers: { echo: fixture("echo-server") } });
    try {
      const client = await hub.connect();
      const crashed = call(client, "echo_crash");
      const during = call(client, "echo_slow", { steps: 50, delayMs: 100 });
      const [a, b] = await Promise.all([crashed, during]);
      assert.equal(a.isError, true);
      assert.equal(b.isError, true);
      assert.match(textOf(b), /exited while running echo_slow/);
    } finally {
      await hub.stop();
    }
  });

  test("SIGTERM to the hub ends every child and leaves no process behind", async () => {
    const hub = await startHub({ extraServers: { a: fixture("echo-server"), b: fixture("echo-server") } });
    const tree = descendants(hub.pid);
    assert.ok(tree.length >= 2, `children running: ${tree}`);
    await hub.stop();
    await until("every child to exit", () => tree.every((pid) => !alive(pid)), 10_000);
    assert.equal(hub.process.exitCode, 0);
  });

  test("a child exits when the hub is killed outright", async () => {
    const hub = await startHub({ extraServers: { a: fixture("echo-server") } });
    // a failed assertion must not leave the hub running: the test runner would wait for it
    try {
      const tree = descendants(hub.pid);
      assert.ok(tree.length >= 1, `children running: ${tree}`);
      hub.process.kill("SIGKILL");
      await until("the orphaned child to notice and exit", () => tree.every((pid) => !alive(pid)), 10_000);
    } finally {
      await hub.stop();
    }
  });

  test("a child that cannot start is reported failed, and the hub still serves the others", async () => {
    const hub = await startHub({
      extraServers: { good: fixture("echo-server"), broken: { command: "/nonexistent/binary" } },
      waitReady: false,
    });
    try {
      await until("good to be ready", async () => {
        const s = (await (await fetch(hub.origin + "/")).json()).servers;
        return (
          s.find((x: { name: string }) => x.name === "good").state === "ready" && s.find((x: { name: string }) => x.name === "broken").state !== "starting"
        );
      });
      const ready = await fetch(hub.origin + "/readyz");
      assert.equal(ready.status, 503);
      const status = (await (await fetch(hub.origin + "/")).json()).servers.find((s: { name: string }) => s.name === "broken");
      assert.match(status.lastError, /ENOENT|nonexistent/);
      const client = await hub.connect();
      assert.equal(textOf(await call(client, "good_echo", { text: "fine" })), "fine");
    } finally {
      await hub.stop();
    }
  });
});

// The terminal's command launcher (servers/terminal/launcher/agentbox-launcher.c), attacked as an
// agent would: commands start from it rather than from a fork of the server, each gets its own
// streams however many run at once, a connection to its socket that is not the launcher's reaches
// no command, its descriptors and memory are closed to the commands, and a command that kills it
// ends what it started without hanging a call, while the next command gets a new launcher.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { readProc } from "../../servers/lib/proc-table.js";
import { descendants, isLauncher, leftovers, useTerminal } from "./harness.js";

interface Outcome {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

describe("the terminal's command launcher", () => {
  const t = useTerminal();

  const run = async (command: string, extra: Record<string, unknown> = {}): Promise<Outcome> =>
    (await t.agent.call("exec", { command, timeoutMs: 30_000, ...extra })).structuredContent as never;
  const launcherOf = async () => {
    const server = await t.h.serverPid();
    const found = descendants(server).filter(isLauncher);
    assert.equal(found.length, 1, `launchers below the server: ${found.join(", ")}`);
    return { server, launcher: found[0] };
  };

  test("commands start from the launcher, not from a fork of the server, and share one launcher", async () => {
    // $PPID is the command's reaper; its parent started it
    const first = Number((await run("ps -o ppid= -p $PPID")).stdout.trim());
    const { server, launcher } = await launcherOf();
    assert.equal(first, launcher);
    assert.equal(readProc(launcher)?.ppid, server);
    assert.equal(Number((await run("ps -o ppid= -p $PPID")).stdout.trim()), launcher);
  });

  test("forty commands at once each get their own stdout, stderr, stdin and exit code", async () => {
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, n) => run(`read line; echo "out ${n} $line"; echo "err ${n}" >&2; exit ${n}`, { stdin: `in ${n}\n` })),
    );
    results.forEach((r, n) => {
      assert.deepEqual([r.stdout, r.stderr, r.exitCode], [`out ${n} in ${n}\n`, `err ${n}\n`, n]);
    });
  });

  test("its descriptors and memory are closed to the commands, and its socket's folder to other users", async () => {
    const { launcher } = await launcherOf();
    const r = await run(`ls /proc/${launcher}/fd; head -c1 /proc/${launcher}/environ`);
    assert.match(r.stderr, /fd.*Permission denied/);
    assert.match(r.stderr, /environ.*Permission denied/);
    const socket = fs.readFileSync(`/proc/${launcher}/cmdline`, "utf8").split("\0")[1];
    const folder = fs.statSync(socket.replace(/\/s$/, ""));
    assert.equal(folder.mode & 0o777, 0o700);
    assert.equal(folder.uid, fs.statSync(`/proc/${launcher}`).uid);
  });

  test("a connection to its socket that is not the launcher's reaches no command", async () => {
    const { launcher } = await launcherOf();
    const socket = fs.readFileSync(`/proc/${launcher}/cmdline`, "utf8").split("\0")[1];
    // running until the attack has been made
    const victim = run("until [ -e attacked ]; do sleep 0.01; done; echo real");
    // the agent's own process, same user: a guessed nonce with output, garbage, and a connection that says nothing
    const attack = await run(
      `python3 -c '
import socket
held = []
for hello in [b"0123456789abcdef0123456789abcdef o\\nFORGED\\n", b"garbage " * 20 + b"\\n", b""]:
    s = socket.socket(socket.AF_UNIX)
    s.connect(${JSON.stringify(socket)})
    s.sendall(hello)
    held.append(s)
print("connected", len(held))
open("attacked", "w").close()
'`,
    );
    assert.equal(attack.stdout, "connected 3\n", JSON.stringify(attack));
    const r = await victim;
    assert.deepEqual([r.stdout, r.stderr, r.exitCode], ["real\n", "", 0]);
    assert.equal((await run("echo next")).stdout, "next\n");
  });

  test("a command that kills the launcher ends the commands it started, and the next command gets a new one", async () => {
    const { server, launcher } = await launcherOf();
    const started = performance.now();
    const other = run("touch other-started; sleep 25; echo never");
    // the calls may reach the server in either order: the other command must be running first
    while (!fs.existsSync(path.join(t.h.workspace, "other-started"))) await new Promise((resolve) => setTimeout(resolve, 10));
    const killer = await run(`kill -KILL ${launcher}; sleep 25; echo never`);
    const r = await other;
    // both ended with the launcher, long before their sleeps
    assert.equal(killer.signal, "SIGKILL", JSON.stringify(killer));
    assert.deepEqual([r.signal, r.stdout], ["SIGKILL", ""], JSON.stringify(r));
    assert.ok(performance.now() - started < 20_000);
    assert.equal((await run("echo again")).stdout, "again\n");
    const now = await launcherOf();
    assert.notEqual(now.launcher, launcher);
    assert.deepEqual(leftovers(server), []);
  });
});

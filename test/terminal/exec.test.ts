// exec through the hub: pipes, exit codes, separate stderr, cwd/env/stdin, streaming progress,
// timeout and cancellation killing the whole tree, and no process left behind.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { leftovers, startTerminal, textOf, type Agent, type Harness } from "./harness.js";
import { until } from "../helpers/wait.js";

describe("terminal exec", () => {
  let h: Harness;
  let agent: Agent;

  before(async () => {
    h = await startTerminal();
    agent = await h.connect();
    fs.mkdirSync(path.join(h.workspace, "sub"));
  });
  after(async () => {
    await h?.stop();
  });

  test("runs a command line with pipes, redirections and &&", async () => {
    const r = await agent.ok("exec", { command: "echo hello world | tr a-z A-Z > out.txt && cat out.txt | wc -w && cat out.txt" });
    assert.equal(r.exitCode, 0);
    assert.equal(r.stdout, "2\nHELLO WORLD\n");
    assert.equal(r.stderr, "");
    assert.equal(r.outputCut, false);
    assert.equal(typeof r.durationMs, "number");
    assert.equal(fs.readFileSync(path.join(h.workspace, "out.txt"), "utf8"), "HELLO WORLD\n");
  });

  test("a failing command is an error result whose text and data carry exit code, stdout and stderr apart", async () => {
    const r = await agent.call("exec", { command: "echo out; echo err >&2; exit 7" });
    assert.equal(r.isError, true);
    // the data comes along (the SDK client has validated it against the outputSchema)
    assert.deepEqual(
      { ...(r.structuredContent as Record<string, unknown>), durationMs: 0 },
      {
        exitCode: 7,
        signal: null,
        stdout: "out\n",
        stderr: "err\n",
        durationMs: 0,
        outputCut: false,
        droppedBytes: { stdout: 0, stderr: 0 },
        timedOut: false,
        cancelled: false,
        killedProcesses: 0,
      },
    );
    assert.match(textOf(r), /^Exit code 7\. Took \d+ ms\.\n--- stdout ---\nout\n--- stderr ---\nerr$/);
  });

  test("cwd, env and stdin", async () => {
    const r = await agent.ok("exec", { command: 'pwd; echo "$GREETING"; wc -c', cwd: "sub", env: { GREETING: "hi there" }, stdin: "abcde" });
    assert.equal(r.stdout, `${path.join(h.workspace, "sub")}\nhi there\n5\n`);
    const home = await agent.ok("exec", { command: "pwd" });
    assert.equal(home.stdout, `${h.workspace}\n`);
  });

  test("with stdin or without, bash -c reads no rc file", async () => {
    // bash takes a socket on stdin for rshd/sshd and then reads ~/.bashrc, unless SHLVL says it
    // is nested: SHLVL=0 is how the hub runs under the image's entrypoint or docker.
    fs.mkdirSync(path.join(h.workspace, "home"));
    fs.writeFileSync(path.join(h.workspace, "home", ".bashrc"), "echo RC_SOURCED; export FROM_RC=yes\n");
    const env = { HOME: path.join(h.workspace, "home"), SHLVL: "0" };
    const command = 'echo "rc:${FROM_RC:-no}"; cat';
    const piped = await agent.ok("exec", { command, env, stdin: "input\n" });
    assert.equal(piped.stdout, "rc:no\ninput\n");
    const closed = await agent.ok("exec", { command, env });
    assert.equal(closed.stdout, "rc:no\n");
  });

  test("every command carries its client session in AGENTBOX_SESSION, which env cannot forge", async () => {
    const other = await h.connect();
    const mine = (await agent.ok("exec", { command: 'echo -n "$AGENTBOX_SESSION"', env: { AGENTBOX_SESSION: "forged" } })).stdout;
    const theirs = (await other.ok("exec", { command: 'echo -n "$AGENTBOX_SESSION"', stdin: "" })).stdout;
    assert.ok(mine.length > 0 && theirs.length > 0, "both commands see a session id");
    assert.notEqual(mine, "forged");
    assert.notEqual(mine, theirs);
    await other.end();
  });

  test("cwd must be an existing directory inside the workspace", async () => {
    fs.symlinkSync("/etc", path.join(h.workspace, "escape"));
    fs.writeFileSync(path.join(h.workspace, "file.txt"), "x");
    const sibling = `${h.workspace}-evil`;
    fs.mkdirSync(sibling);
    for (const [cwd, why] of [
      ["..", /outside the workspace/],
      ["/etc", /outside the workspace/],
      ["escape", /outside the workspace/],
      [sibling, /outside the workspace/],
      ["sub/../../", /outside the workspace/],
      ["missing", /No such file or directory/],
      ["file.txt", /not a directory/],
    ] as const) {
      const r = await agent.call("exec", { command: "pwd", cwd });
      assert.equal(r.isError, true, `cwd ${cwd} should be refused`);
      assert.match(textOf(r), why);
    }
    fs.rmSync(sibling, { recursive: true });
  });

  test("bad input is refused with a message saying what is allowed", async () => {
    for (const args of [{}, { command: "" }, { command: "true", timeoutMs: -1 }, { command: "true", env: { "BAD-NAME": "x" } }]) {
      const outcome = await agent.call("exec", args).then(
        (r) => (r.isError ? textOf(r) : "accepted"),
        (err: Error) => err.message,
      );
      assert.notEqual(outcome, "accepted", JSON.stringify(args));
    }
  });

  test("timeout kills the whole process tree and says so", async () => {
    const server = await h.serverPid();
    const r = await agent.call("exec", { command: "sh -c 'sleep 100 & sleep 100'; echo never", timeoutMs: 500 });
    assert.equal(r.isError, true);
    const killed = Number(textOf(r).match(/^Timed out after 500 ms: killed the whole process tree \((\d+) processes\)/)?.[1]);
    assert.ok(killed >= 3, `killed ${killed}: ${textOf(r)}`);
    assert.deepEqual(leftovers(server), []);
  });

  test("a process that escaped the group with setsid is killed too", async () => {
    const server = await h.serverPid();
    const r = await agent.call("exec", { command: "setsid sleep 101 & sleep 100", timeoutMs: 500 });
    assert.match(textOf(r), /^Timed out after 500 ms/);
    assert.deepEqual(leftovers(server), []);
  });

  test("background processes are killed when the command exits", async () => {
    const server = await h.serverPid();
    const r = await agent.ok("exec", { command: "sleep 102 & setsid sleep 103 & echo started" });
    assert.equal(r.stdout, "started\n");
    assert.ok(r.killedProcesses >= 2);
    assert.deepEqual(leftovers(server), []);
  });

  test("output is streamed as progress notifications while the command runs", async () => {
    // The command only finishes after the test saw its first line through a progress
    // notification and answered by creating a file, so streaming is what lets it end.
    const messages: string[] = [];
    const go = path.join(h.workspace, "go");
    const r = await agent.call(
      "exec",
      { command: "echo first; while [ ! -f go ]; do sleep 0.05; done; echo second >&2; echo third", timeoutMs: 30_000 },
      {
        onprogress: (p) => {
          messages.push(p.message ?? "");
          if (messages.join("").includes("first")) fs.writeFileSync(go, "");
        },
      },
    );
    assert.equal(r.isError, undefined, textOf(r));
    assert.equal((r.structuredContent as any).stdout, "first\nthird\n");
    assert.equal(messages.join(""), "first\nsecond\nthird\n");
  });

  test("cancelling the call kills the process tree", async () => {
    const server = await h.serverPid();
    const controller = new AbortController();
    const pending = agent.call(
      "exec",
      { command: "echo started; sh -c 'sleep 104 & sleep 104'", timeoutMs: 60_000 },
      { signal: controller.signal, onprogress: () => controller.abort() },
    );
    await assert.rejects(pending);
    await until("the cancelled command's processes to be gone", () => leftovers(server).length === 0);
  });

  test("hundreds of execs leave the process table as it was", async () => {
    const server = await h.serverPid();
    const commands = ["true", "echo x | cat", "exit 3", "sleep 30 &", "(sleep 30 &) ; echo y", "false || echo z >&2"];
    for (let i = 0; i < 200; i++) {
      const r = await agent.call("exec", { command: commands[i % commands.length] });
      assert.doesNotMatch(textOf(r), /^Timed out/);
    }
    assert.deepEqual(leftovers(server), []);
  });
});

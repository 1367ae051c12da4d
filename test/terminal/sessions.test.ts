// Persistent terminals through the hub: a Python REPL, a shell prompt asking a question, top,
// resize, reads (new/tail, raw/stripped), waits, failures, and two clients kept apart.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { leftovers, startTerminal, textOf, type Agent, type Harness } from "./harness.js";
import { until } from "../helpers/wait.js";

const PROMPT = "\\$ $";

describe("terminal sessions", () => {
  let h: Harness;
  let agent: Agent;

  before(async () => {
    h = await startTerminal();
    agent = await h.connect();
  });
  after(async () => {
    await h?.stop();
  });

  /** A bash terminal with a known prompt, ready for input. */
  async function bash(a: Agent = agent, extra: Record<string, unknown> = {}): Promise<string> {
    const t = await a.ok("session_create", { shell: "bash", args: ["--norc", "--noprofile", "-i"], env: { PS1: "$ " }, ...extra });
    await a.ok("session_read", { id: t.id, waitFor: PROMPT });
    return t.id;
  }

  test("a Python REPL driven through session_send and session_read", async () => {
    const t = await agent.ok("session_create", { shell: "/usr/bin/python3", args: ["-i", "-q"] });
    assert.equal(t.alive, true);
    const banner = await agent.ok("session_read", { id: t.id, waitFor: ">>> $" });
    assert.equal(banner.waited, "pattern");

    await agent.ok("session_send", { id: t.id, input: "x = 6 * 7\n", waitFor: ">>> $" });
    let r = await agent.ok("session_send", { id: t.id, input: "print(x)\n", waitFor: ">>> $" });
    assert.equal(r.output, "print(x)\n42\n>>> ");

    // A block needs a blank line to end it; the continuation prompt shows up in between.
    r = await agent.ok("session_send", { id: t.id, input: "def sq(n):\n    return n * n\n\n", waitFor: ">>> $" });
    assert.match(r.output, /\.\.\. /);
    r = await agent.ok("session_send", { id: t.id, input: "sq(12)\n", waitFor: ">>> $" });
    assert.match(r.output, /^144$/m);

    // Ctrl-C interrupts a running statement without ending the REPL.
    await agent.ok("session_send", { id: t.id, input: "import time; time.sleep(100)\n" });
    r = await agent.ok("session_send", { id: t.id, keys: ["Ctrl-C"], waitFor: "KeyboardInterrupt[\\s\\S]*>>> $" });
    assert.equal(r.alive, true);

    // Ctrl-D at the prompt ends it.
    r = await agent.ok("session_send", { id: t.id, keys: ["C-d"], waitFor: "will not match", timeoutMs: 10_000 });
    assert.equal(r.waited, "exited");
    assert.equal(r.alive, false);
    assert.equal(r.exitCode, 0);
    const list = await agent.ok("session_list");
    assert.equal(list.terminals.find((x: any) => x.id === t.id).alive, false);
    const refused = await agent.call("session_send", { id: t.id, input: "1\n" });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /exited with code 0/);
    await agent.ok("session_kill", { id: t.id });
  });

  test("a program that asks a question gets its answer", async () => {
    const id = await bash();
    await agent.ok("session_send", { id, input: 'read -p "Your name? " name; echo "Hello, $name!"\n', waitFor: "Your name\\? $" });
    const r = await agent.ok("session_send", { id, input: "Ada\n", waitFor: PROMPT });
    assert.match(r.output, /^Hello, Ada!$/m);
    await agent.ok("session_kill", { id });
  });

  test("top runs, redraws after a resize and quits", async () => {
    const id = await bash();
    await agent.ok("session_send", { id, input: "stty size\n", waitFor: PROMPT }).then((r) => assert.match(r.output, /^40 120$/m));
    await agent.ok("session_send", { id, input: "top -d 1\n", waitFor: "load average" });
    const resized = await agent.ok("session_resize", { id, cols: 100, rows: 30 });
    assert.deepEqual([resized.cols, resized.rows], [100, 30]);
    await agent.ok("session_read", { id, waitFor: "load average" });
    const r = await agent.ok("session_send", { id, input: "q", waitFor: PROMPT });
    assert.equal(r.waited, "pattern");
    const size = await agent.ok("session_send", { id, input: "stty size\n", waitFor: "^\\d+ \\d+\\s*$" });
    assert.match(size.output, /^30 100$/m);
    await agent.ok("session_kill", { id });
  });

  test("waitFor matches what the command prints, not the terminal's echo of the input", async () => {
    const id = await bash();
    const r = await agent.ok("session_send", { id, input: "sleep 0.3; echo the-answer-$((6 * 7))\n", waitFor: "the-answer" });
    assert.equal(r.waited, "pattern");
    assert.match(r.output, /^the-answer-42$/m);
    // a program that does not echo (read -s) still matches its output
    await agent.ok("session_send", { id, input: 'read -s secret; echo "got ${#secret}"\n', waitFor: PROMPT, quietMs: 200 });
    const quiet = await agent.ok("session_send", { id, input: "hush\n", waitFor: "got" });
    assert.match(quiet.output, /got 4/);
    const env = await agent.ok("session_send", { id, input: 'echo "[$AGENTBOX_SESSION]"\n', waitFor: "^\\[.+\\]" });
    assert.match(env.output, /^\[[^\]]+\]$/m, "the terminal carries AGENTBOX_SESSION");
    await agent.ok("session_kill", { id });
  });

  test("cwd, env and size at creation", async () => {
    fs.mkdirSync(path.join(h.workspace, "proj"));
    const id = await bash(agent, { cwd: "proj", env: { PS1: "$ ", ANSWER: "42" }, cols: 80, rows: 24 });
    const r = await agent.ok("session_send", { id, input: 'echo "$PWD $ANSWER"; stty size\n', waitFor: "^24 80" });
    assert.match(r.output, new RegExp(`^${path.join(h.workspace, "proj")} 42$`, "m"));
    await agent.ok("session_kill", { id });
  });

  test("reads: new output once, a tail on request, ANSI kept only when asked", async () => {
    const id = await bash();
    await agent.ok("session_send", { id, input: "for i in 1 2 3 4 5; do echo row$i; done; printf '\\033[31mred\\033[0m\\n'\n", waitFor: "red\\n\\$ $" });
    const again = await agent.ok("session_read", { id });
    assert.equal(again.output, "", "output already returned by session_send is not returned twice");

    const tail = await agent.ok("session_read", { id, mode: "tail", limit: 3 });
    assert.equal(tail.output, "row5\nred\n$ ");
    const raw = await agent.ok("session_read", { id, mode: "tail", limit: 3, stripAnsi: false });
    assert.match(raw.output, /\x1b\[31mred\x1b\[0m\r\n/);

    await agent.ok("session_send", { id, input: "echo later\n" });
    const fresh = await agent.ok("session_read", { id, waitFor: "later\\n\\$ $" });
    assert.match(fresh.output, /^later$/m);
    assert.doesNotMatch(fresh.output, /row/);
    await agent.ok("session_kill", { id });
  });

  test("waits end when output goes quiet, or at the timeout with what came so far", async () => {
    const id = await bash();
    const quiet = await agent.ok("session_send", { id, input: "echo one; sleep 0.3; echo two\n", waitFor: "two", quietMs: 200 });
    assert.equal(quiet.waited, "pattern");
    assert.match(quiet.output, /one[\s\S]*two/);
    const late = await agent.ok("session_send", { id, input: "echo partial; sleep 100\n", waitFor: "never printed", timeoutMs: 500 });
    assert.equal(late.waited, "timeout");
    assert.match(late.output, /^partial$/m);
    const stopped = await agent.ok("session_send", { id, keys: ["Ctrl-C"], waitFor: PROMPT });
    assert.equal(stopped.waited, "pattern");
    await agent.ok("session_kill", { id });
  });

  test("session_kill kills everything started in the terminal", async () => {
    const server = await h.serverPid();
    const id = await bash();
    await agent.ok("session_send", { id, input: "sleep 200 & setsid sleep 201 & (sleep 202 &)\n", waitFor: PROMPT });
    const killed = await agent.ok("session_kill", { id });
    assert.ok(killed.killedProcesses >= 4, `killed ${killed.killedProcesses}`);
    const mine = leftovers(server).filter((line) => line.startsWith(`${killed.pid} `) || /sleep 20[0-2]/.test(line));
    assert.deepEqual(mine, []);
    const gone = await agent.call("session_read", { id });
    assert.equal(gone.isError, true);
  });

  test("failures say what was wrong", async () => {
    const id = await bash();
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ["session_read", { id: "t-nope" }, /No terminal 't-nope'/],
      ["session_send", { id: "t-nope", input: "x" }, /No terminal 't-nope'/],
      ["session_resize", { id: "t-nope", cols: 80, rows: 24 }, /No terminal 't-nope'/],
      ["session_kill", { id: "t-nope" }, /No terminal 't-nope'/],
      ["session_send", { id }, /Nothing to send/],
      ["session_send", { id, keys: ["Hyper-Q"] }, /Unknown key 'Hyper-Q'.*Ctrl-C/],
      ["session_send", { id, input: "x", waitFor: "(" }, /not a valid regular expression/],
      ["session_read", { id, waitFor: "[" }, /not a valid regular expression/],
      ["session_create", { shell: "no-such-shell-xyz" }, /not found on PATH/],
      ["session_create", { shell: "relative/bin/sh" }, /not an executable/],
      ["session_create", { cwd: "../" }, /outside the workspace/],
      ["session_create", { cwd: "/tmp" }, /outside the workspace/],
    ];
    for (const [tool, args, message] of cases) {
      const r = await agent.call(tool, args);
      assert.equal(r.isError, true, `${tool} ${JSON.stringify(args)}`);
      assert.match(textOf(r), message);
    }
    const tooSmall = await agent.call("session_resize", { id, cols: 1, rows: 1 }).then(
      (r) => (r.isError ? textOf(r) : "accepted"),
      (err: Error) => err.message,
    );
    assert.notEqual(tooSmall, "accepted");
    await agent.ok("session_kill", { id });
  });

  test("input to a terminal whose program ended fails with what it printed last and its exit code", async () => {
    const id = await bash();
    await agent.ok("session_send", { id, input: "echo last words; exit 7\n" });
    const ended = async () => ((await agent.ok("session_list", {})).terminals as Array<{ id: string; alive: boolean }>).some((t) => t.id === id && !t.alive);
    await until("the terminal's shell to exit", ended);
    const sent = await agent.call("session_send", { id, input: "anyone there?\n" });
    assert.equal(sent.isError, true);
    assert.match(textOf(sent), /exited[^]*nothing was sent/);
    const data = sent.structuredContent as { alive: boolean; exitCode: number | null; sentBytes: number; output: string };
    assert.deepEqual([data.alive, data.exitCode, data.sentBytes], [false, 7, 0]);
    assert.match(data.output, /last words/);
    const resized = await agent.call("session_resize", { id, cols: 100, rows: 30 });
    assert.equal(resized.isError, true);
    assert.equal((resized.structuredContent as { exitCode: number | null }).exitCode, 7);
    await agent.ok("session_kill", { id });
  });

  test("two client sessions cannot see or touch each other's terminals", async () => {
    const alice = await h.connect();
    const bob = await h.connect();
    const id = await bash(alice);
    const bobs = await bob.ok("session_list");
    assert.deepEqual(bobs.terminals, []);
    for (const [tool, args] of [
      ["session_read", { id }],
      ["session_send", { id, input: "echo hijacked > owned.txt\n" }],
      ["session_resize", { id, cols: 50, rows: 10 }],
      ["session_kill", { id }],
    ] as const) {
      const r = await bob.call(tool, args);
      assert.equal(r.isError, true, tool);
      assert.match(textOf(r), new RegExp(`No terminal '${id}'`));
    }
    assert.equal(fs.existsSync(path.join(h.workspace, "owned.txt")), false);
    const mine = await alice.ok("session_list");
    assert.deepEqual(
      mine.terminals.map((t: any) => [t.id, t.alive, t.cols]),
      [[id, true, 120]],
    );
    const r = await alice.ok("session_send", { id, input: "echo still mine\n", waitFor: "still mine" });
    assert.equal(r.alive, true);
  });

  test("a client session's terminals end when the session does", async () => {
    const carol = await h.connect();
    const dave = await h.connect();
    const hers = await bash(carol);
    const his = await bash(dave);
    const pidOf = async (a: Agent, id: string) => (await a.ok("session_list")).terminals.find((t: any) => t.id === id).pid as number;
    const herPid = await pidOf(carol, hers);
    const hisPid = await pidOf(dave, his);
    await carol.end();
    await until("the closed session's shell to be gone", () => !fs.existsSync(`/proc/${herPid}`));
    assert.ok(fs.existsSync(`/proc/${hisPid}`), "another session's terminal is untouched");
    const r = await dave.ok("session_send", { id: his, input: "echo alive\n", waitFor: "^alive" });
    assert.equal(r.alive, true);
  });
});

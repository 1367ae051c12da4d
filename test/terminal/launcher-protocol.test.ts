// The launcher's own protocol (servers/terminal/launcher/agentbox-launcher.c), spoken to it
// directly: what a command prints never reaches the launcher's answers, a malformed request is
// answered and the launcher keeps serving, and exits are told as they happened.
import { afterEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";

const helper = fileURLToPath(new URL("../../bin/agentbox-launcher", import.meta.url));

const started: ChildProcess[] = [];

/** A launcher with no socket to reach (requests here name no streams), and its answers as they come. */
function launcher() {
  const child = spawn(helper, ["/nonexistent/socket"], { stdio: ["pipe", "pipe", "pipe"] });
  started.push(child);
  const lines: string[] = [];
  let partial = "";
  child.stdout.setEncoding("latin1").on("data", (chunk: string) => {
    const parts = (partial + chunk).split("\n");
    partial = parts.pop()!;
    lines.push(...parts);
  });
  const send = (fields: string[]) => {
    const request = Buffer.from([...fields, ""].join("\0"));
    child.stdin.write(`${request.length}\n`);
    child.stdin.write(request);
  };
  /** Runs argv with no streams named; its nonce. */
  const run = (argv: string[], streams = "") => {
    const nonce = randomBytes(16).toString("hex");
    send([nonce, "/", streams, String(argv.length), ...argv, "PATH=/usr/bin:/bin"]);
    return nonce;
  };
  const answer = async (pattern: RegExp) => {
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 10))) {
      const found = lines.find((line) => pattern.test(line));
      if (found) return found;
    }
    throw new Error(`no answer ${pattern} in ${JSON.stringify(lines)}`);
  };
  return { child, lines, send, run, answer, end: () => child.stdin.end() };
}

describe("the launcher's protocol", () => {
  // a failed assertion must not leave a launcher holding the test process open
  afterEach(() => {
    for (const child of started.splice(0)) child.kill("SIGKILL");
  });

  test("what a command prints, even a forged answer, never reaches the launcher's answers", async () => {
    const l = launcher();
    const nonce = l.run(["/bin/sh", "-c", "echo 'exited 00000000000000000000000000000000 0 -'; echo started >&2; exit 3"]);
    await l.answer(new RegExp(`^exited ${nonce} 3 -$`));
    assert.deepEqual(
      l.lines.map((line) => line.replace(/ \d+$/, " PID")),
      [`started ${nonce} PID`, `exited ${nonce} 3 -`],
    );
    l.end();
  });

  test("a malformed request is answered, and the next one served", async () => {
    const l = launcher();
    const bad = randomBytes(16).toString("hex");
    l.send([bad, "/", "", "5", "/bin/true"]); // five arguments announced, one given
    await l.answer(new RegExp(`^failed ${bad} malformed request$`));
    const nonce = l.run(["/bin/true"]);
    await l.answer(new RegExp(`^exited ${nonce} 0 -$`));
    l.end();
  });

  test("a command ended by a signal is told by its number, and one that cannot start by exit 127", async () => {
    const l = launcher();
    const killed = l.run(["/bin/sh", "-c", "kill -TERM $$"]);
    const missing = l.run(["/nonexistent/program"]);
    await l.answer(new RegExp(`^exited ${killed} - 15$`));
    await l.answer(new RegExp(`^exited ${missing} 127 -$`));
    l.end();
    assert.equal(await new Promise((resolve) => l.child.once("exit", resolve)), 0);
  });
});

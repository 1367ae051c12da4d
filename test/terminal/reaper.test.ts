// A command's subreaper (servers/terminal/reaper/agentbox-reaper.c), attacked as an agent would:
// what a command leaves behind dies when it exits however it hid (setsid, double forks, `env -i`,
// a fork storm), its report cannot be forged, a library the agent preloads never loads into it,
// and a command that kills its reaper still leaves nothing marked behind, since the server then
// looks for its processes itself.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { isAlive, readProc } from "../../servers/lib/proc-table.js";
import { pidsIn } from "../helpers/processes.js";
import { leftovers, useTerminal } from "./harness.js";

interface Outcome {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  killedProcesses: number;
  timedOut: boolean;
}

describe("a command's subreaper", () => {
  const t = useTerminal();

  const run = async (command: string, timeoutMs = 30_000): Promise<Outcome> => (await t.agent.call("exec", { command, timeoutMs })).structuredContent as never;

  test("daemons with neither the command's group, its session nor its environment die when it exits", async () => {
    const r = await run(
      // the second double-forked: sh prints its daemon's pid and exits, leaving it an orphan
      "env -i setsid sleep 110 >/dev/null 2>&1 </dev/null & echo $!; " + "(env -i setsid sh -c 'sleep 111 >/dev/null 2>&1 </dev/null & echo $!')",
    );
    const daemons = pidsIn(r.stdout);
    assert.equal(daemons.length, 2, JSON.stringify(r));
    assert.equal(r.exitCode, 0);
    // gone when the call returns: no sweep, no wait
    assert.deepEqual(
      daemons.filter((pid) => isAlive(pid)),
      [],
    );
    assert.ok(r.killedProcesses >= 2, `killed ${r.killedProcesses}`);
  });

  test("on timeout such a daemon is killed with the tree: the reaper, stopped first, holds it below", async () => {
    // double-forked: its parent gone at once, it is no descendant of bash
    const r = await run("(env -i setsid sleep 117 >/dev/null 2>&1 </dev/null & echo $!); sleep 100", 700);
    const [daemon] = pidsIn(r.stdout);
    assert.ok(r.timedOut && daemon > 0, JSON.stringify(r));
    // dead, if perhaps not yet reaped by init (the reaper died with the tree)
    assert.ok([undefined, "Z"].includes(readProc(daemon)?.state), "the daemon outlived the timed-out command");
  });

  test("a storm of background processes forking on is ended, and the next command runs", async () => {
    const server = await t.h.serverPid();
    const r = await run("(while true; do sleep 112 & done) & until [ \"$(pgrep -cf '^sleep 112')\" -gt 10 ]; do :; done; echo storming");
    assert.equal(r.stdout, "storming\n");
    assert.ok(r.killedProcesses > 10, `killed ${r.killedProcesses}`);
    assert.deepEqual(leftovers(server), []);
    assert.equal((await t.agent.ok("exec", { command: "echo next" })).stdout, "next\n");
  });

  test("the command's exit code or signal is its own, and `kill 0` does not take the reaper with it", async () => {
    const server = await t.h.serverPid();
    assert.equal((await run("exit 42")).exitCode, 42);
    const killedSelf = await run("kill -TERM $$");
    assert.deepEqual([killedSelf.exitCode, killedSelf.signal], [null, "SIGTERM"]);
    // a script ending its own process group: the reaper survives it and still ends the rest
    const group = await run('setsid sleep 113 & until [ "$(ps -o sid= -p $!)" -eq $! ] 2>/dev/null; do :; done; kill 0');
    assert.equal(group.signal, "SIGTERM");
    assert.ok(group.killedProcesses >= 1, JSON.stringify(group));
    assert.deepEqual(leftovers(server), []);
  });

  test("its report cannot be written by the command, through /proc or otherwise", async () => {
    const r = await run("echo 0 > /proc/$PPID/fd/3; echo 0 >&3; cat /proc/$PPID/environ > /dev/null");
    assert.match(r.stderr, /\/proc\/\d+\/fd\/3: Permission denied/);
    assert.match(r.stderr, /3: Bad file descriptor/);
    assert.match(r.stderr, /environ: Permission denied/);
  });

  test("a command that kills its reaper leaves nothing that carries its marker", async () => {
    const server = await t.h.serverPid();
    const r = await run("sleep 114 & setsid sleep 115 & (setsid sleep 116 &); kill -KILL $PPID; sleep 30");
    // the reaper died by the command's hand: the server found the rest by the tree's links and marker
    assert.equal(r.signal, "SIGKILL", JSON.stringify(r));
    assert.ok(r.killedProcesses >= 4, `killed ${r.killedProcesses}`);
    assert.deepEqual(leftovers(server), []);
  });

  test("a library the agent preloads loads into its own programs, never into the reaper", async () => {
    // the agent's shared object notes every process it is loaded into; the agent sets LD_PRELOAD for its command
    const source = path.join(t.h.workspace, "note.c");
    const library = path.join(t.h.workspace, "note.so");
    const notes = path.join(t.h.workspace, "preloaded.txt");
    fs.writeFileSync(
      source,
      `#include <stdio.h>\n#include <stdlib.h>\n__attribute__((constructor)) static void note(void) {\n` +
        `  char name[64] = ""; FILE *comm = fopen("/proc/self/comm", "r"); if (comm) { fgets(name, sizeof name, comm); fclose(comm); }\n` +
        `  FILE *out = fopen(getenv("PRELOAD_NOTES"), "a"); if (out) { fputs(name, out); fclose(out); }\n}\n`,
    );
    execFileSync("cc", ["-shared", "-fPIC", "-o", library, source]);
    const r = (await t.agent.call("exec", { command: "true", env: { LD_PRELOAD: library, PRELOAD_NOTES: notes } })).structuredContent as unknown as Outcome;
    assert.equal(r.exitCode, 0, JSON.stringify(r));
    const loadedInto = fs.readFileSync(notes, "utf8").trim().split("\n");
    // it did load: into bash, which the agent's command is
    assert.ok(loadedInto.includes("bash"), loadedInto.join(", "));
    // and not into the reaper (statically linked: no dynamic loader reads the environment)
    assert.ok(!loadedInto.some((name) => name.startsWith("agentbox-reap")), loadedInto.join(", "));
  });
});

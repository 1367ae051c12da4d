// The pieces that bound and explain a child's output: the flood gate's accounting, the list
// refresh coalescer, the log's protected fields, and which stderr lines explain a failure.
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { afterEach, describe, mock, test } from "node:test";
import { createLogger } from "../../../servers/lib/log.js";
import { telling } from "../../../hub/children/failure.js";
import { ChildStderr, StderrMemory } from "../../../hub/children/stderr.js";
import { Coalescer, FloodGate } from "../../../hub/children/flood-gate.js";
import { systemClock } from "../../../hub/protocol/clock.js";

describe("child output bounds", () => {
  afterEach(() => mock.timers.reset());

  test("the flood gate lets a second's budget through and counts every other event once", async () => {
    const reports: number[] = [];
    const gate = new FloodGate(10, (n) => reports.push(n), systemClock);
    let admitted = 0;
    for (let i = 0; i < 1000; i++) if (gate.admit()) admitted++;
    gate.report();
    assert.equal(admitted, 10);
    assert.deepEqual(reports, [990]);
  });

  test("the flood gate reports a window's drops when the window ends, and the next window admits its own budget", () => {
    mock.timers.enable({ apis: ["Date", "setTimeout"], now: 1_000_000 });
    const reports: number[] = [];
    const gate = new FloodGate(3, (n) => reports.push(n), systemClock);
    const admitted = () => Array.from({ length: 10 }, () => gate.admit()).filter(Boolean).length;
    assert.equal(admitted(), 3);
    mock.timers.tick(999);
    assert.deepEqual(reports, [], "nothing is reported while the window lasts");
    assert.equal(admitted(), 0, "the window's budget is spent");
    mock.timers.tick(1);
    assert.deepEqual(reports, [17], "one line for the window's drops, when it ends");
    assert.equal(admitted(), 3, "a new window, a new budget");
    mock.timers.tick(5_000);
    assert.deepEqual(reports, [17, 7]);
  });

  test("a burst of list changes costs one refresh now and one after the interval, none lost", async () => {
    mock.timers.enable({ apis: ["Date", "setTimeout"], now: 1_000_000 });
    const runs: string[][] = [];
    const refresh = new Coalescer<string>(100, async (keys) => void runs.push(keys), systemClock);
    for (let i = 0; i < 1000; i++) refresh.request(i % 2 ? "tools" : "prompts");
    assert.deepEqual(runs, [["prompts"]]);
    await new Promise((resolve) => setImmediate(resolve)); // the first run settles (setImmediate is not mocked)
    mock.timers.tick(99);
    assert.deepEqual(runs, [["prompts"]], "no second run within the interval");
    mock.timers.tick(1);
    assert.deepEqual(runs, [["prompts"], ["tools", "prompts"]], "the second run has every list asked for since the first began");
    refresh.cancel();
  });

  test("a log field never overwrites the entry's own time, level, message or base fields", () => {
    const lines: string[] = [];
    const log = createLogger({ tenant: "alice" }, { level: "debug", write: (l) => lines.push(l) });
    log.info("hello", JSON.parse('{"tenant":"bob","level":"error","msg":"forged","time":"1970","__proto__":{"x":1},"extra":2}'));
    const entry = JSON.parse(lines[0]);
    assert.equal(entry.tenant, "alice");
    assert.equal(entry.level, "info");
    assert.equal(entry.msg, "hello");
    assert.notEqual(entry.time, "1970");
    assert.equal(entry["field.tenant"], "bob");
    assert.equal(entry.extra, 2);
  });

  test("relayed stderr is nested, cut, and rate-bounded", async () => {
    const lines: string[] = [];
    const stream = new PassThrough();
    const stderr = new ChildStderr(
      stream,
      createLogger({ child: "x" }, { level: "debug", write: (l) => lines.push(l) }),
      {
        linesPerSecond: 5,
        maxLineBytes: 16,
        notificationsPerSecond: 5,
      },
      systemClock,
    );
    stream.end(['{"child":"y","msg":"m"}', "a".repeat(100), ...Array(20).fill("z")].join("\n"));
    await stderr.ended;
    const entries = lines.map((l) => JSON.parse(l));
    assert.ok(entries.every((e) => e.child === "x"));
    assert.equal(entries.filter((e) => e.msg === "child output").length, 5);
    assert.match(entries[1].output, /^a{16}… \(84 more bytes dropped\)$/);
    assert.equal(entries.at(-1).dropped, 17);
    assert.equal(stderr.memory.lines.length, 22, "every line is remembered to explain a failure");
  });

  test("the telling lines of a Node crash are its error, not its version", () => {
    const memory = new StderrMemory();
    const crash = [
      "node:internal/modules/cjs/loader:1210",
      "  throw err;",
      "  ^",
      "",
      "Error: Cannot find module '/x.js'",
      "    at Module._resolveFilename (node:internal)",
      "  code: 'MODULE_NOT_FOUND',",
      "}",
      "",
      "Node.js v20.20.2",
    ];
    for (const line of crash) memory.add(line);
    assert.deepEqual(telling(memory, "first"), ["Error: Cannot find module '/x.js'"]);
    const quiet = new StderrMemory();
    for (const line of ["listening", "on port 3", "bye"]) quiet.add(line);
    assert.deepEqual(telling(quiet, "first"), ["listening", "on port 3", "bye"]);
  });
});

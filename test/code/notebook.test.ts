// Notebook behaviour of code_execute through the hub: state, display, streams, tracebacks, plots.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { PNG } from "pngjs";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { run, openCodeHub, type CodeHub } from "./harness.js";

describe("code_execute: notebook semantics", () => {
  let hub: CodeHub;
  let client: Client;

  before(async () => ({ hub, client } = await openCodeHub()));
  after(() => hub?.stop());

  test("the hub publishes the code tools with schemas and annotations", async () => {
    const tools = (await client.listTools()).tools.filter((t) => t.name.startsWith("code_"));
    const names = tools.map((t) => t.name).sort();
    assert.deepEqual(names, ["code_execute", "code_install", "code_reset", "code_sessions"]);
    const execute = tools.find((t) => t.name === "code_execute")!;
    assert.deepEqual(execute.inputSchema.required?.sort(), ["code", "language"]);
    assert.ok(execute.outputSchema, "execute declares its output");
    for (const tool of tools) assert.ok(tool.annotations, `${tool.name} has annotations`);
  });

  test("a bare expression answers its value in both languages", async () => {
    const py = await run(client, "python", "2**10");
    assert.equal(py.text, "1024");
    assert.equal(py.data.result, "1024");
    const js = await run(client, "javascript", "2 ** 10");
    assert.equal(js.text, "1024");
    const str = await run(client, "python", "'a' + 'b'");
    assert.equal(str.text, "'ab'", "Python shows the repr");
    const obj = await run(client, "javascript", "({ a: [1, 2], b: 'x' })");
    assert.equal(obj.text, "{ a: [ 1, 2 ], b: 'x' }", "JavaScript shows util.inspect");
  });

  test("no display when the last statement is not an expression", async () => {
    const py = await run(client, "python", "y = 5");
    assert.equal(py.data.result, null);
    assert.equal(py.text, "(no output)");
    const none = await run(client, "python", "None");
    assert.equal(none.data.result, null);
    const js = await run(client, "javascript", "let z = 5");
    assert.equal(js.data.result, null);
  });

  test("state persists between calls: variables, imports, functions, classes", async () => {
    await run(client, "python", "import math\ncounter = 1\ndef double(v):\n    return v * 2\nclass Box:\n    size = 3");
    const py = await run(client, "python", "counter += 1\n(double(counter), math.floor(2.7), Box.size)");
    assert.equal(py.text, "(4, 2, 3)");

    await run(client, "javascript", "const base = 10\nfunction triple(v) { return v * 3 }\nclass Point { constructor(x) { this.x = x } }");
    const js = await run(client, "javascript", "[triple(base), new Point(7).x]");
    assert.equal(js.text, "[ 30, 7 ]");
    // running a cell that declares a const again works, as re-running a notebook cell should
    const again = await run(client, "javascript", "const base = 11\nbase");
    assert.equal(again.text, "11");
  });

  test("the working directory is the workspace", async () => {
    const py = await run(client, "python", "import os\nos.getcwd()");
    assert.equal(py.data.result, `'${hub.workspace}'`);
    const js = await run(client, "javascript", "process.cwd()");
    assert.equal(js.data.result, `'${hub.workspace}'`);
  });

  test("modules in the workspace import by relative path; a missing package says how to get it", async () => {
    fs.writeFileSync(path.join(hub.workspace, "helper.cjs"), "exports.v = 'cjs';\n");
    fs.writeFileSync(path.join(hub.workspace, "helper.mjs"), "export const w = 'esm';\n");
    fs.writeFileSync(path.join(hub.workspace, "pyhelper.py"), "z = 'py'\n");
    const js = await run(client, "javascript", "import { w } from './helper.mjs'\n[require('./helper.cjs').v, w]");
    assert.equal(js.text, "[ 'cjs', 'esm' ]");
    const py = await run(client, "python", "import pyhelper\npyhelper.z");
    assert.equal(py.text, "'py'");
    const missing = await run(client, "javascript", "await import('agentbox-no-such-package')");
    assert.equal(missing.result.isError, true);
    assert.match(missing.data.error!, /Cannot find package 'agentbox-no-such-package': install it with code_install/);
  });

  test("stdout and stderr are captured separately", async () => {
    const py = await run(client, "python", "import sys\nprint('to out')\nprint('to err', file=sys.stderr)\n'value'");
    assert.equal(py.data.stdout, "to out\n");
    assert.equal(py.data.stderr, "to err\n");
    assert.equal(py.data.result, "'value'");
    assert.match(py.text, /\[stdout\]\nto out\n\[stderr\]\nto err\n\[result\]\n'value'/);

    const js = await run(client, "javascript", "console.log('js out'); console.error('js err'); process.stdout.write('raw')");
    assert.equal(js.data.stdout, "js out\nraw");
    assert.equal(js.data.stderr, "js err\n");
  });

  test("output of subprocesses the code starts is captured too", async () => {
    const py = await run(client, "python", "import subprocess\nsubprocess.run(['echo', 'from child'])\nNone");
    assert.equal(py.data.stdout, "from child\n");
  });

  test("an exception is an error result with the traceback trimmed to the user's code", async () => {
    const py = await run(client, "python", "def inner(v):\n    return 1 / v\n\ninner(0)");
    assert.equal(py.result.isError, true);
    assert.equal(py.data.status, "error");
    assert.match(py.data.error!, /^Traceback \(most recent call last\):\n {2}File "<cell \d+>", line 4, in <module>/);
    assert.match(py.data.error!, /line 2, in inner/);
    assert.match(py.data.error!, /ZeroDivisionError: division by zero/);
    assert.doesNotMatch(py.data.error!, /driver\.py|asyncio/, "no frames of the driver");
    assert.equal(py.data.stateKept, true);

    const syntax = await run(client, "python", "def broken(:\n  pass");
    assert.equal(syntax.result.isError, true);
    assert.match(syntax.data.error!, /SyntaxError/);

    const js = await run(client, "javascript", "function failing() {\n  throw new TypeError('bad thing')\n}\nfailing()");
    assert.equal(js.result.isError, true);
    assert.match(js.data.error!, /^TypeError: bad thing\n {4}at failing \(<cell \d+>:2:9\)/);
    assert.doesNotMatch(js.data.error!, /driver\.js|node:vm|node:internal/);

    const jsSyntax = await run(client, "javascript", "let = = 1");
    assert.equal(jsSyntax.result.isError, true);
    assert.match(jsSyntax.data.error!, /SyntaxError/);
  });

  test("the session survives SystemExit and output before the error is kept", async () => {
    const py = await run(client, "python", "print('before')\nraise SystemExit(3)");
    assert.equal(py.result.isError, true);
    assert.equal(py.data.stdout, "before", "the text's [stdout] part");
    assert.match(py.data.error!, /SystemExit: 3/);
    const after = await run(client, "python", "counter");
    assert.equal(after.data.status, "ok");
  });

  test("a matplotlib figure comes back as a PNG image", async () => {
    const py = await run(client, "python", "import matplotlib.pyplot as plt\nplt.figure(figsize=(2, 1), dpi=50)\nplt.plot([1, 3, 2])\nplt.show()");
    assert.equal(py.result.isError, undefined);
    assert.equal(py.data.images, 1);
    const images = py.result.content.filter((c) => c.type === "image");
    assert.equal(images.length, 1);
    const image = images[0] as { data: string; mimeType: string };
    assert.equal(image.mimeType, "image/png");
    const png = PNG.sync.read(Buffer.from(image.data, "base64"));
    assert.ok(png.width > 50 && png.height > 20, `decoded a ${png.width}x${png.height} PNG`);
    // a figure is shown once, like a notebook: the next cell has none
    const next = await run(client, "python", "1");
    assert.equal(next.data.images, 0);
  });

  test("top-level await works in JavaScript (and in Python)", async () => {
    const js = await run(client, "javascript", "const v = await new Promise((r) => setTimeout(() => r(42), 20));\nv + 1");
    assert.equal(js.text, "43");
    const later = await run(client, "javascript", "v");
    assert.equal(later.text, "42", "an awaited const is kept for later cells");
    const py = await run(client, "python", "import asyncio\nawait asyncio.sleep(0.01)\n'done'");
    assert.equal(py.text, "'done'");
  });

  // asyncio (with ssl) is ~4 MiB in every interpreter: it loads with the first cell that awaits (issue 41)
  test("a Python interpreter loads asyncio only when a cell awaits, and later cells await on the same loop", async () => {
    // a client of its own: the suite's client lists its sessions further down
    const own = await hub.connect();
    assert.equal((await run(own, "python", "import sys\n'asyncio' in sys.modules")).text, "False");
    await run(own, "python", "import asyncio\nqueue = asyncio.Queue()\nawait queue.put(7)");
    // a queue is bound to the loop it was first used on: a new loop per cell would raise here
    assert.equal((await run(own, "python", "await queue.get()")).text, "7");
    await own.close();
  });

  test("long output is capped with the tail kept", async () => {
    const py = await run(client, "python", "for i in range(20000):\n    print('line', i)");
    assert.equal(py.data.outputCut, true);
    assert.match(py.data.stdout, /^\[… \d+ characters omitted …\]\n/);
    assert.ok(py.data.stdout.endsWith("line 19999\n"), "the end of the output is kept");
    assert.ok(py.data.stdout.length < 60_000);
  });

  test("named sessions keep state apart and are listed", async () => {
    await run(client, "python", "secret = 'a'", { session: "first" });
    await run(client, "python", "secret = 'b'", { session: "second" });
    assert.equal((await run(client, "python", "secret", { session: "first" })).text, "'a'");
    assert.equal((await run(client, "python", "secret", { session: "second" })).text, "'b'");
    const missing = await run(client, "python", "secret");
    assert.equal(missing.result.isError, true, "the default session has no 'secret'");
    assert.match(missing.data.error!, /NameError/);

    const listed = await client.callTool({ name: "code_sessions", arguments: {} });
    const sessions = (listed.structuredContent as { sessions: Array<{ name: string; language: string; memoryBytes: number | null }> }).sessions;
    const names = sessions.map((s) => `${s.language}:${s.name}`).sort();
    assert.deepEqual(names, ["javascript:default", "python:default", "python:first", "python:second"]);
    assert.ok(sessions.every((s) => typeof s.memoryBytes === "number" && s.memoryBytes > 0));

    const bad = await client.callTool({ name: "code_execute", arguments: { language: "python", code: "1", session: "no spaces allowed" } });
    assert.equal(bad.isError, true);
  });

  test("reset gives a fresh interpreter", async () => {
    await run(client, "python", "kept = 1", { session: "r" });
    const reset = await client.callTool({ name: "code_reset", arguments: { language: "python", session: "r" } });
    assert.equal(reset.isError, undefined);
    const gone = await run(client, "python", "kept", { session: "r" });
    assert.match(gone.data.error!, /NameError/);
    const unknown = await client.callTool({ name: "code_reset", arguments: { language: "javascript", session: "nope" } });
    assert.equal(unknown.isError, true);
  });
});

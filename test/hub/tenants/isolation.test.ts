// Two tenants on one hub run as root (as CI does): tenant A attacks as an agent would, from its
// terminal and its code, and every attack on tenant B, on the hub and on their secrets fails.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { isAlive, realUid } from "../../../servers/lib/proc-table.js";
import { call, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { execEscaping, pidsIn } from "../../helpers/processes.js";
import { json } from "../../helpers/raw-http.js";
import { until } from "../../helpers/wait.js";

// random per run: no file but the hub's config can hold them (a search finds only real leaks)
const KEY_A = `alice-${randomBytes(16).toString("hex")}`;
const KEY_B = `bob-${randomBytes(16).toString("hex")}`;
const asRoot = process.getuid?.() === 0;
const skip = asRoot ? false : "needs root: the hub switches tenants to their own uids only when it can";

const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

/** Run a command line as the tenant's agent; read from the text, which a failed command also has. */
async function sh(client: Client, command: string): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const text = textOf(await call(client, "terminal_exec", { command, timeoutMs: 60_000 }));
  const parts = /^Exit code (\d+)\.[^]*?--- stdout ---\n([^]*)\n--- stderr ---\n?([^]*)$/.exec(text);
  assert.ok(parts, `unexpected terminal_exec reply: ${text.slice(0, 500)}`);
  return { exitCode: Number(parts[1]), stdout: parts[2], stderr: parts[3] };
}

describe("two tenants on one hub", { skip }, () => {
  let hub: TestHub;
  let alice: Client;
  let bob: Client;
  let bobSession: string;

  before(async () => {
    hub = await startHub({
      servers: ["terminal", "file", "code"],
      config: { tenants: { alice: { apiKey: KEY_A, limits: { processes: 96, memoryMiB: 512 } }, bob: { apiKey: KEY_B } } },
    });
    alice = await hub.connect({ headers: auth(KEY_A) });
    bob = await hub.connect({ headers: auth(KEY_B) });
    await call(bob, "file_write", { path: "secret.txt", content: "bob's secret" });
    bobSession = ((await call(bob, "hub_sessions")).structuredContent as { id: string }).id;
  });
  after(() => hub?.stop());

  // what GET / shows a tenant: its own servers (a container's root may not read their environ)
  const serverPids = async (key: string) =>
    ((await (await fetch(hub.origin + "/", { headers: auth(key) })).json()).servers as Array<{ pid: number | null }>).flatMap((s) => (s.pid ? [s.pid] : []));

  test("each tenant runs under its own uid, neither root nor the hub's, without capabilities", async () => {
    const a = await sh(alice, "id -u; grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs)' /proc/self/status");
    const b = await sh(bob, "id -u");
    const [uidA] = a.stdout.split("\n");
    assert.notEqual(uidA, b.stdout.trim());
    assert.notEqual(uidA, "0");
    assert.notEqual(Number(uidA), process.getuid!());
    assert.match(a.stdout, /CapEff:\s+0+\n/);
    assert.match(a.stdout, /CapPrm:\s+0+\n/);
    assert.match(a.stdout, /CapBnd:\s+0+\n/);
    assert.match(a.stdout, /NoNewPrivs:\s+1/);
  });

  test("A's commands and code find no secret of B or of the hub", async () => {
    // the keys travel base64-encoded, so this command line itself does not hold them
    const b64 = (s: string) => Buffer.from(s).toString("base64");
    const probe = await sh(
      alice,
      `env; cat /proc/$PPID/environ; for p in /proc/[0-9]*; do cat $p/environ $p/cmdline 2>/dev/null; done; ` +
        `grep -rls -e "$(echo ${b64(KEY_B)} | base64 -d)" -e "$(echo ${b64(KEY_A)} | base64 -d)" /proc/${hub.pid}/environ /var/lib/agentbox /tmp 2>/dev/null | sed 's/^/FOUND /' | head -3; true`,
    );
    const seen = probe.stdout + probe.stderr;
    assert.ok(!seen.includes(KEY_B), "B's key is readable by A");
    assert.ok(!seen.includes(KEY_A), "A's own API key is readable by A's commands");
    assert.doesNotMatch(seen, /^FOUND /m, "a file readable by A holds a key");
    const code = await call(alice, "code_execute", { language: "python", code: "import os\nprint(sorted(k for k in os.environ))" });
    assert.doesNotMatch(textOf(code), /AGENTBOX_API_KEY|AGENTBOX_TENANTS|HUB_TOKEN/);
    const hubEnv = await sh(alice, `cat /proc/${hub.pid}/environ`);
    assert.notEqual(hubEnv.exitCode, 0, "the hub's environment is readable");
  });

  test("A cannot act as B: not with B's session id, nor a forged or its own session token", async () => {
    const asB = await fetch(hub.url, {
      method: "POST",
      headers: { ...json, ...auth(KEY_A), "Mcp-Session-Id": bobSession, "MCP-Protocol-Version": "2025-11-25" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "hub_end_session", arguments: {} } }),
    });
    assert.equal(asB.status, 404, "A's key with B's session id must not reach B's session");
    // A's code holds a token for A's session only; anything else is no credential
    const code = await call(alice, "code_execute", {
      language: "python",
      code: [
        "import os, json, urllib.request",
        "def whoami(token):",
        "    req = urllib.request.Request(os.environ['AGENTBOX_HUB_URL'], method='POST', headers={'Content-Type': 'application/json', 'X-Agentbox-Session-Token': token},",
        "        data=json.dumps({'jsonrpc': '2.0', 'id': 1, 'method': 'tools/call', 'params': {'name': 'hub_sessions', 'arguments': {}}}).encode())",
        "    try:",
        "        return json.loads(urllib.request.urlopen(req).read())['result']['structuredContent']['id']",
        "    except urllib.error.HTTPError as e:",
        "        return e.code",
        "token = os.environ['AGENTBOX_SESSION_TOKEN']",
        "print('RESULT' + json.dumps([whoami(token), whoami(token[:-1] + ('A' if token[-1] != 'A' else 'B')), whoami('')]))",
      ].join("\n"),
    });
    const line = /RESULT(.*)/.exec(textOf(code));
    assert.ok(line, textOf(code));
    const [own, forged, empty] = JSON.parse(line[1]);
    const aliceSession = ((await call(alice, "hub_sessions")).structuredContent as { id: string }).id;
    assert.equal(own, aliceSession, "A's token acts as A's session");
    assert.equal(forged, 401);
    assert.equal(empty, 401);
    const stillB = await call(bob, "file_read", { path: "secret.txt" });
    assert.match(textOf(stillB), /bob's secret/, "B's session survived");
  });

  test("A cannot kill B's processes or the hub", async () => {
    const targets = [hub.pid, ...(await serverPids(KEY_B))];
    assert.ok(targets.length >= 2, "B's servers are running");
    const attack = await sh(alice, `for p in ${targets.join(" ")}; do kill -9 $p && echo "killed $p"; done; true`);
    assert.doesNotMatch(attack.stdout, /killed/);
    assert.match(attack.stderr, /Operation not permitted/);
    for (const pid of targets) assert.ok(isAlive(pid), `pid ${pid} was killed`);
  });

  test("A cannot read or list B's files, through a command, a tool or a path trick", async () => {
    const bobFile = path.join(hub.workspace, "bob", "secret.txt");
    const viaShell = await sh(alice, `cat ${bobFile}; ls ${hub.workspace}; ls ${path.dirname(bobFile)}`);
    assert.ok(!viaShell.stdout.includes("bob's secret"));
    assert.match(viaShell.stderr, /Permission denied/);
    for (const p of [bobFile, "../bob/secret.txt", `file://${bobFile}`]) {
      const viaTool = await call(alice, "file_read", { path: p });
      assert.equal(viaTool.isError, true, p);
      assert.ok(!textOf(viaTool).includes("bob's secret"), p);
    }
    const link = await sh(alice, `ln -s ${bobFile} peek && cat peek; ln ${bobFile} hard 2>&1; true`);
    assert.ok(!link.stdout.includes("bob's secret"));
    const viaLink = await call(alice, "file_read", { path: "peek" });
    assert.ok(!textOf(viaLink).includes("bob's secret"));
  });

  test("a fork bomb and a memory hog stay inside their tenant", async () => {
    const forker = [
      "import os, time",
      "pids = []",
      "try:",
      "    for i in range(1000):",
      "        pid = os.fork()",
      "        if pid == 0:",
      "            time.sleep(30); os._exit(0)",
      "        pids.append(pid)",
      "    print('unbounded', len(pids))",
      "except OSError as e:",
      "    print('blocked after', len(pids), e.strerror)",
      "for p in pids: os.kill(p, 9)",
    ].join("\n");
    fs.writeFileSync(path.join(hub.workspace, "alice", "bomb.py"), forker);
    const bomb = await sh(alice, "/usr/bin/python3 bomb.py");
    assert.match(bomb.stdout, /blocked after \d+ Resource temporarily unavailable/, `the process cap held: ${bomb.stdout} ${bomb.stderr}`);
    assert.equal((await sh(bob, "echo bob is fine")).stdout.trim(), "bob is fine");
    const hog = await sh(alice, "/usr/bin/python3 -c 'x = bytearray(800 * 2**20)' 2>&1; echo exit=$?");
    assert.match(hog.stdout, /MemoryError/);
  });

  test("A's processes, daemonized or not, are gone seconds after A's session ends", async () => {
    const other = await hub.connect({ headers: auth(KEY_A) });
    // the command kills its reaper, so what it hid from the command's end outlives the command
    const started = await execEscaping(
      other,
      "setsid nohup sleep 1000 >/dev/null 2>&1 & (env -i setsid sh -c 'sleep 1001 >/dev/null 2>&1 &' &) ; sleep 0.3; pgrep -u $(id -u) -x sleep",
    );
    const pids = pidsIn(started);
    assert.ok(pids.length >= 2, `daemons started: ${started}`);
    assert.ok(pids.some(isAlive), "a daemon outlived its command");
    const uid = Number((await sh(alice, "id -u")).stdout.trim());
    await (other.transport as StreamableHTTPClientTransport).terminateSession(); // DELETE: the session ends
    await other.close();
    await until("the session's processes to die", () => pids.every((pid) => !isAlive(pid)));
    // the tenant's other session and its servers live on
    assert.equal((await sh(alice, "echo alive")).stdout.trim(), "alive");
    const servers = await serverPids(KEY_A);
    assert.ok(servers.length > 0 && servers.every((pid) => isAlive(pid) && realUid(pid) === uid));
  });
});

// Tenants apart on the network (issue 36): bob leaves services listening on every kind of local
// address and on an abstract UNIX socket; alice tries to reach them as an agent would, from her
// shell, her Python and JavaScript, and her Chromium. Nothing she tries reaches them (bob's own log
// of accepted connections stays empty of her), while each tenant still reaches its own services,
// the hub's endpoint and ports outside every tenant's block.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { distRoot } from "../../../hub/config/config.js";
import { call, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";
import { freePortIn, listenForTenants, portsOf, type PortRange } from "../../helpers/tenant-ports.js";
import { startInTerminal } from "../previews/apps.js";

const KEY_A = `alice-${randomBytes(16).toString("hex")}`;
const KEY_B = `bob-${randomBytes(16).toString("hex")}`;
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });
const skip = process.getuid?.() === 0 ? false : "needs root: tenants are apart on the network when the hub runs them under their own uids";
const SECRET = `bob-secret-${randomBytes(8).toString("hex")}`;
const ABSTRACT = `agentbox-bob-${randomBytes(6).toString("hex")}`;

const exec = async (client: Client, command: string) => textOf(await call(client, "terminal_exec", { command, timeoutMs: 60_000 }));
const runCode = async (client: Client, language: "python" | "javascript", code: string) =>
  textOf(await call(client, "code_execute", { language, code, timeoutMs: 60_000 }));

/** Bash reaching host:port with /dev/tcp (no curl needed): what the service said, or why not. */
const viaShell = (host: string, port: number) => `timeout 10 bash -c 'exec 3<>/dev/tcp/${host}/${port} && cat <&3' 2>&1; echo " [exit $?]"`;

const PY_PROBE = (targets: Array<[string, number]>, abstract: string) => `
import socket
out = []
for host, port in ${JSON.stringify(targets)}:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(family)
    s.settimeout(10)
    try:
        s.connect((host, port))
        out.append(f"{host}:{port} answered {s.recv(4096)!r}")
    except OSError as e:
        out.append(f"{host}:{port} refused {e}")
    finally:
        s.close()
u = socket.socket(socket.AF_UNIX)
try:
    u.connect("\\0${abstract}")
    out.append(f"abstract answered {u.recv(4096)!r}")
except OSError as e:
    out.append(f"abstract refused {e}")
print("\\n".join(out))
`;

const JS_PROBE = (targets: Array<[string, number]>, abstract: string) => `
const net = require("node:net");
const tryOne = (options, label) => new Promise((resolve) => {
  const socket = net.connect(options);
  let got = "";
  socket.setTimeout(10000, () => socket.destroy(new Error("timeout")));
  socket.on("data", (d) => (got += d));
  socket.on("end", () => resolve(label + " answered " + got));
  socket.on("error", (e) => resolve(label + " refused " + e.code));
});
const lines = [];
for (const [host, port] of ${JSON.stringify(targets)}) lines.push(await tryOne({ host, port }, host + ":" + port));
lines.push(await tryOne({ path: "\\0${abstract}" }, "abstract"));
lines.join("\\n");
`;

describe("tenants apart on the network", { skip }, () => {
  let hub: TestHub;
  let alice: Client;
  let bob: Client;
  let bobPorts: PortRange;
  let alicePorts: PortRange;
  let log: string;
  /** Bob's listeners: [address as a client names it, port], every family and wildcard. */
  let targets: Array<[string, number]>;
  let outsider: net.Server;
  let outsiderPort: number;

  const accepted = () => (fs.existsSync(log) ? fs.readFileSync(log, "utf8").trim().split("\n").filter(Boolean) : []);

  before(async () => {
    hub = await startHub({
      servers: ["terminal", "code", "browser"],
      config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } },
    });
    alice = await hub.connect({ headers: auth(KEY_A) });
    bob = await hub.connect({ headers: auth(KEY_B) });
    [alicePorts, bobPorts] = await Promise.all([portsOf(hub, KEY_A), portsOf(hub, KEY_B)]);
    const [v4, wild4, v6, wild6, other127] = await freePortIn(bobPorts, 5);
    targets = [
      ["127.0.0.1", v4],
      ["127.0.0.1", wild4],
      ["127.9.9.9", wild4],
      ["::1", v6],
      ["::1", wild6],
      ["::ffff:127.0.0.1", wild6],
      ["127.0.0.1", wild6],
      ["127.0.0.2", other127],
    ];
    log = path.join(hub.workspace, "bob", "accepted.log");
    const script = path.join(distRoot(), "test", "fixtures", "tenant-listener.js");
    const specs = [`tcp:127.0.0.1:${v4}`, `tcp:0.0.0.0:${wild4}`, `tcp:[::1]:${v6}`, `tcp:[::]:${wild6}`, `tcp:127.0.0.2:${other127}`, `abstract:${ABSTRACT}`];
    await startInTerminal(bob, `${process.execPath} ${script} ${log} ${SECRET} ${specs.join(" ")}`, /LISTENING \d+/);
    // a service of nobody's block, below the ephemeral range: what egress to any other port stands for here
    outsider = net.createServer((s) => s.end("outsider here"));
    outsiderPort = await listenForTenants(outsider);
  });
  after(async () => {
    outsider?.close();
    await hub?.stop();
  });

  test("bob reaches every one of his own services, over every address, from his shell and his code", async () => {
    for (const [host, port] of targets) assert.match(await exec(bob, viaShell(host, port)), new RegExp(SECRET), `${host}:${port}`);
    const fromCode = await runCode(bob, "python", PY_PROBE(targets, ABSTRACT));
    for (const [host, port] of targets) assert.match(fromCode, new RegExp(`${host}:${port} answered .*${SECRET}`));
    // an abstract socket reaches the processes of the server that made it (bob's terminal here), not his other servers
    assert.match(
      await exec(bob, `python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect("\\0${ABSTRACT}"); print(s.recv(999))'`),
      new RegExp(SECRET),
    );
  });

  test("alice's shell reaches none of bob's services, on any address", async () => {
    const before = accepted().length;
    for (const [host, port] of targets) {
      const out = await exec(alice, viaShell(host, port));
      assert.doesNotMatch(out, new RegExp(SECRET), `${host}:${port}: ${out}`);
      assert.match(out, /Permission denied|Connection refused/, `${host}:${port}: ${out}`);
    }
    const abstract = await exec(alice, `python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect("\\0${ABSTRACT}"); print(s.recv(999))' 2>&1`);
    assert.doesNotMatch(abstract, new RegExp(SECRET));
    assert.match(abstract, /PermissionError|Operation not permitted|Connection refused/);
    assert.equal(accepted().length, before, `bob's services accepted alice: ${accepted().join("; ")}`);
  });

  test("alice's Python and JavaScript reach none of them either", async () => {
    const before = accepted().length;
    const py = await runCode(alice, "python", PY_PROBE(targets, ABSTRACT));
    const js = await runCode(alice, "javascript", JS_PROBE(targets, ABSTRACT));
    for (const out of [py, js]) {
      assert.doesNotMatch(out, new RegExp(SECRET), out);
      for (const [host, port] of targets) assert.match(out, new RegExp(`${host.replace(/\./g, "\\.")}:${port} refused`), out);
      assert.match(out, /abstract refused/, out);
    }
    assert.equal(accepted().length, before, `bob's services accepted alice: ${accepted().join("; ")}`);
  });

  test("alice's Chromium cannot open bob's services", async () => {
    const before = accepted().length;
    for (const url of [`http://127.0.0.1:${targets[0][1]}/`, `http://[::1]:${targets[3][1]}/`, `http://127.0.0.9:${targets[1][1]}/`]) {
      const result = await call(alice, "browser_navigate", { url });
      assert.doesNotMatch(textOf(result), new RegExp(SECRET), `${url}: ${textOf(result)}`);
    }
    assert.equal(accepted().length, before, `bob's services accepted alice's browser: ${accepted().join("; ")}`);
  });

  test("alice keeps her own services, the hub's endpoint and other ports; binding outside her ports says which are hers", async () => {
    const [mine] = await freePortIn(alicePorts, 1);
    await startInTerminal(alice, `python3 -m http.server ${mine} --bind 127.0.0.1`, /Serving HTTP/);
    // from her code (another of her servers) to her terminal's service, and out to a port of nobody's
    const reach = await runCode(
      alice,
      "python",
      `import urllib.request, socket\nprint(urllib.request.urlopen("http://127.0.0.1:${mine}/").status)\nprint(socket.create_connection(("127.0.0.1", ${outsiderPort})).recv(99))`,
    );
    assert.match(reach, /200[^]*outsider here/, reach);
    const viaHub = await runCode(alice, "python", "from agentbox import tools\nprint(tools.hub_status()['isolation']['network'])");
    assert.match(viaHub, /isolated/, viaHub);
    // a dev server's usual port is refused, and the answer names hers
    const refused = await exec(alice, "python3 -m http.server 3000 --bind 127.0.0.1");
    assert.match(refused, /Permission denied/, refused);
    assert.match(refused, new RegExp(`listen only on TCP ports ${alicePorts.low}-${alicePorts.high}`), refused);
    assert.match(await exec(alice, "echo $PORT $AGENTBOX_PORTS"), new RegExp(`${alicePorts.low} ${alicePorts.low}-${alicePorts.high}`));
  });

  test("hub_status, GET / and the instructions name the tenant's ports; hub_preview takes only them", async () => {
    const status = await call(alice, "hub_status", {});
    const isolation = (status.structuredContent as { isolation: Record<string, string> }).isolation;
    assert.equal(isolation.network, "isolated");
    assert.match(isolation.networkSummary, /Landlock/);
    assert.equal(isolation.ports, `${alicePorts.low}-${alicePorts.high}`);
    assert.match(alice.getInstructions() ?? "", new RegExp(`listen only on TCP ports ${alicePorts.low}-${alicePorts.high}`));
    const whole = await (await fetch(`${hub.origin}/`, { headers: auth(KEY_B) })).json();
    assert.equal(whole.isolation.network, "isolated");
    const outside = await call(alice, "hub_preview", { port: targets[0][1] });
    assert.equal(outside.isError, true);
    assert.match(textOf(outside), new RegExp(`listen only on TCP ports ${alicePorts.low}-${alicePorts.high}`));
  });

  test("the hub is unaffected: still serving both tenants", async () => {
    await until("the hub to answer", async () => (await fetch(`${hub.origin}/healthz`)).ok);
    assert.match(await exec(bob, "echo still"), /still/);
  });
});

#!/usr/bin/env node
// Container smoke test: run the built image with host networking and check it the way a user's
// MCP client would, over real HTTP with the SDK client.
//
//   node docker/smoke.mjs [--image agentbox]
//
// 1. Default security profile, the agent user remapped to a host uid (AGENTBOX_UID/GID) and a
//    host folder mounted as /workspace: /readyz becomes 200, every built-in server's tools are
//    listed (on /mcp and /v1/mcp), one real call to each server, the HEALTHCHECK turns healthy,
//    files written in the container belong to the host uid, no compiler is in the image, and
//    `docker stop` ends it cleanly (exit 0, nothing killed).
// 2. Hardened: --cap-drop ALL --user agent --security-opt no-new-privileges: ready, Chromium
//    opens a page, a command runs as agent, clean stop.
// 3. Root with --cap-drop ALL: the entrypoint refuses at once and says what to do instead.
//    docs/deploy.md's `docker run … -e AGENTBOX_UID=$(id -u) -e AGENTBOX_GID=$(id -g)` as root on the host
//    types it (ids 0): it starts, agent keeps its ids (docker/smoke-readme.mjs).
// 4. `docker run -i --rm IMAGE --stdio`: a stdio MCP client lists every server's tools and calls one.
// 5. --read-only with a tmpfs /tmp and a volume for /workspace (docker/smoke-deploy.mjs).
// 6. Two replicas behind nginx with deploy/nginx's config: sessions stay put, losing one costs
//    only its sessions (docker/smoke-deploy.mjs).
//
// Prints one line per check and closes with "smoke: N passed, N failed"; exits 1 on a failure.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { docker, imageSize, logs, removeContainer, startContainer, stopContainer, tail, waitReady } from "./container.mjs";
import { PAGE_TITLE, PAGE_TOKEN, PAPER_TITLE, startFixtures } from "./fixtures.mjs";
import { phaseReadOnly, phaseReplicas } from "./smoke-deploy.mjs";
import { phaseTenants } from "./smoke-tenants.mjs";
import { phaseRootHostUser } from "./smoke-readme.mjs";
// documents made by the libraries that write each format (built by `npm run build`, which `npm run setup` runs)
import { makeDocx, makePdf, makeXlsx } from "../dist/test/markitdown/fixtures.js";

const SERVERS = ["file", "terminal", "browser", "markitdown", "arxiv", "code"];
const CALL_TIMEOUT_MS = 120_000; // Chromium's and Python's first start in a cold container
const image = argValue("--image") ?? "agentbox";

function argValue(name) {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}

// --- a tiny check runner: every check runs, each says what was wrong --------------------------------
const results = [];
async function check(name, fn) {
  try {
    const note = await fn();
    results.push({ name, ok: true });
    console.log(`ok - ${name}${note ? ` (${note})` : ""}`);
  } catch (err) {
    results.push({ name, ok: false });
    console.log(`not ok - ${name}\n    ${String(err?.message ?? err).replace(/\n/g, "\n    ")}`);
  }
}
function expect(condition, message) {
  if (!condition) throw new Error(message);
}

// --- MCP helpers --------------------------------------------------------------------------------
async function connect(origin, endpoint = "/mcp", headers = {}) {
  const client = new Client({ name: "agentbox-docker-smoke", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(endpoint, origin), { requestInit: { headers } }));
  return client;
}
const textOf = (result) =>
  result.content
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
async function callOk(client, name, args) {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS });
  expect(!result.isError, `${name} answered with an error: ${textOf(result).slice(0, 800)}`);
  return result;
}
async function allTools(client) {
  const names = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    names.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor);
  return names;
}

async function waitHealthy(container, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let status = "";
  while (Date.now() < deadline) {
    status = await docker(["inspect", "-f", "{{if .State.Health}}{{.State.Health.Status}}{{end}}", container.id]);
    if (status === "healthy") return;
    if (status === "unhealthy") break;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`health status is "${status}" (HEALTHCHECK curls /healthz inside the container)`);
}

/** Prints the hub's pid inside the container (the image has no pgrep): the node process running main.js, not a server. */
const HUB_PID = `for d in /proc/[0-9]*; do tr '\\0' ' ' <"$d/cmdline" 2>/dev/null | grep -q '^/usr/local/bin/node /app/dist/bundle/hub/main.js' && echo "\${d#/proc/}"; done | head -1`;

/** docker stop, then: exit code 0 (137 had docker killed it), the hub itself said it stopped, and was not started again. */
async function checkCleanStop(container) {
  const restarts = (text) => text.match(/starting it again/g)?.length ?? 0;
  const restartsBefore = restarts(await logs(container));
  const stop = await stopContainer(container);
  expect(stop.exitCode === 0, `exit code ${stop.exitCode} after docker stop (0 expected)\n${tail(stop.logs)}`);
  expect(/"msg":"stopped"/.test(stop.logs), `the hub did not log that it stopped:\n${tail(stop.logs)}`);
  expect(restarts(stop.logs) === restartsBefore, `the hub was started again while the container stopped:\n${tail(stop.logs)}`);
  return `stopped in ${(stop.stopMs / 1000).toFixed(1)} s`;
}

// --- phase 1: the default way to run it -----------------------------------------------------------
async function phaseDefault(fixtures) {
  // A host folder owned by a host uid that is not the image's 1000, as `-v $PWD/work:/workspace`.
  const hostUid = process.getuid?.() === 0 ? 4321 : process.getuid();
  const hostGid = process.getuid?.() === 0 ? 4321 : process.getgid();
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), "agentbox-smoke-ws-"));
  fs.chmodSync(ws, 0o755);
  if (process.getuid?.() === 0) fs.chownSync(ws, hostUid, hostGid);

  const container = await startContainer({
    image,
    env: {
      ARXIV_API_URL: fixtures.arxivApiUrl,
      ARXIV_MIN_INTERVAL_MS: "0",
      AGENTBOX_RATE_LIMITS: "off",
      AGENTBOX_UID: String(hostUid),
      AGENTBOX_GID: String(hostGid),
    },
    args: ["-v", `${ws}:/workspace`, "--health-interval", "2s", "--health-start-period", "60s"],
  });
  let client;
  try {
    let readyMs = NaN;
    await check("container becomes ready (/readyz 200)", async () => {
      readyMs = await waitReady(container);
      return `${(readyMs / 1000).toFixed(1)} s after docker run`;
    });
    // Not ready (a server failed to start) still goes on: the checks below then say which
    // server's tools are missing and which calls fail, rather than one "not ready".
    await check("an MCP client connects to /mcp", async () => {
      client = await connect(container.origin);
    });
    if (!client) return { readyMs };

    let names = [];
    await check("tools/list has tools of every built-in server", async () => {
      names = await allTools(client);
      const missing = SERVERS.filter((s) => !names.some((n) => n.startsWith(`${s}_`)));
      if (missing.length) {
        const states = await fetch(`${container.origin}/readyz`)
          .then((r) => r.text())
          .catch((e) => String(e));
        throw new Error(`no tools from: ${missing.map((s) => `${s} (${s}_*)`).join(", ")}\n/readyz: ${states}\nlisted: ${names.join(", ") || "(none)"}`);
      }
      return `${names.length} tools`;
    });
    await check("/v1/mcp serves the same tools", async () => {
      const v1 = await connect(container.origin, "/v1/mcp");
      try {
        const v1names = await allTools(v1);
        expect(v1names.length === names.length, `${v1names.length} tools on /v1/mcp, ${names.length} on /mcp`);
      } finally {
        await v1.close();
      }
    });

    await check("browser: navigate to a host page and read it", async () => {
      const nav = await callOk(client, "browser_navigate", { url: fixtures.pageUrl });
      expect(textOf(nav).includes(PAGE_TITLE), `navigate's snapshot lacks "${PAGE_TITLE}":\n${textOf(nav).slice(0, 600)}`);
      const text = await callOk(client, "browser_get_text", {});
      expect(textOf(text).includes(PAGE_TOKEN), `get_text lacks "${PAGE_TOKEN}":\n${textOf(text).slice(0, 600)}`);
    });

    await check("file: write and read back; the host sees it owned by AGENTBOX_UID", async () => {
      const content = "written by the container smoke test\n";
      await callOk(client, "file_write", { path: "smoke/hello.txt", content });
      const read = await callOk(client, "file_read", { path: "smoke/hello.txt" });
      expect(textOf(read).includes(content.trim()), `file_read returned:\n${textOf(read).slice(0, 400)}`);
      const st = fs.statSync(path.join(ws, "smoke", "hello.txt"));
      expect(st.uid === hostUid && st.gid === hostGid, `on the host the file is ${st.uid}:${st.gid}, expected ${hostUid}:${hostGid}`);
    });

    await check("terminal: a command runs as the remapped agent user", async () => {
      const res = await callOk(client, "terminal_exec", { command: "id -un; id -u; pwd" });
      const out = res.structuredContent?.stdout ?? textOf(res);
      expect(out.includes(`agent\n${hostUid}\n/workspace`), `expected "agent", ${hostUid} and /workspace, got:\n${out}`);
    });

    // the image's compiled subreaper (servers/terminal/reaper.ts) ends a daemon that left the command's group, session and environment
    await check("terminal: what a command hid in the background ends with it", async () => {
      const res = await callOk(client, "terminal_exec", { command: "env -i setsid sleep 300 >/dev/null 2>&1 </dev/null & echo $!; sleep 0.3" });
      const daemon = Number((res.structuredContent?.stdout ?? "").trim());
      expect(res.structuredContent?.killedProcesses >= 1, `killed ${res.structuredContent?.killedProcesses}, expected the daemon:\n${textOf(res)}`);
      const after = await callOk(client, "terminal_exec", { command: `kill -0 ${daemon} 2>/dev/null && echo alive || echo gone` });
      expect(after.structuredContent?.stdout === "gone\n", `the daemon ${daemon} is ${after.structuredContent?.stdout}`);
    });

    // the image's compiled launcher (servers/terminal/launcher.ts) starts commands: the command's reaper is its child
    await check("terminal: commands start from the launcher, not from a fork of the server", async () => {
      const res = await callOk(client, "terminal_exec", { command: "cat /proc/$(cut -d' ' -f4 /proc/$PPID/stat)/comm" });
      const parent = (res.structuredContent?.stdout ?? textOf(res)).trim();
      expect(parent === "agentbox-launch", `the command's reaper was started by "${parent}"`);
    });

    // hub/tenants/ipc-objects.ts removes a tenant's System V IPC objects with ipcrm (util-linux), and
    // finds its POSIX message queues in /dev/mqueue, which Docker mounts
    await check("the hub can see and remove what tenants leave in IPC", async () => {
      const res = await callOk(client, "terminal_exec", { command: "command -v ipcrm; stat -f -c %T /dev/mqueue" });
      const out = (res.structuredContent?.stdout ?? textOf(res)).trim().split("\n");
      expect(out[0]?.endsWith("/ipcrm"), `no ipcrm in the image: ${out[0] || "(nothing)"}`);
      expect(out[1] === "mqueue", `/dev/mqueue is not an mqueue file system: ${out[1] || "(nothing)"}`);
    });

    await check("runtime image has no compilers", async () => {
      const res = await callOk(client, "terminal_exec", { command: "for c in gcc g++ cc c++ make; do command -v $c; done; true" });
      const out = (res.structuredContent?.stdout ?? textOf(res)).trim();
      expect(out === "", `found: ${out}`);
    });

    await check("markitdown: convert a CSV and an HTML file", async () => {
      await callOk(client, "file_write", { path: "smoke/table.csv", content: "name,value\nalpha,1\nbeta,2\n" });
      const csv = textOf(await callOk(client, "markitdown_convert", { source: "smoke/table.csv" }));
      expect(/\|\s*alpha\s*\|\s*1\s*\|/.test(csv), `CSV did not become a Markdown table:\n${csv.slice(0, 400)}`);
      await callOk(client, "file_write", { path: "smoke/doc.html", content: "<html><body><h1>Smoke Heading</h1><p>some <b>bold</b> text</p></body></html>" });
      const html = textOf(await callOk(client, "markitdown_convert", { source: "smoke/doc.html" }));
      expect(html.includes("# Smoke Heading") && html.includes("**bold**"), `HTML did not become Markdown:\n${html.slice(0, 400)}`);
    });

    // the converters that load PDF.js, mammoth and SheetJS from node_modules, which the image keeps only in part (scripts/runtime-modules.mjs)
    await check("markitdown: convert a PDF, a Word and an Excel document", async () => {
      const converted = async (bytes, name) => textOf(await callOk(client, "markitdown_convert", { content: bytes.toString("base64"), name }));
      const pdf = await converted(await makePdf(["Smoke PDF line"]), "smoke.pdf");
      expect(pdf.includes("Smoke PDF line"), `the PDF's text is missing:\n${pdf.slice(0, 400)}`);
      const docx = await converted(await makeDocx(), "smoke.docx");
      expect(/^# Quarterly Report/m.test(docx), `the Word document's heading is missing:\n${docx.slice(0, 400)}`);
      const xlsx = await converted(makeXlsx(), "smoke.xlsx");
      expect(/\| apple \| 3 +\|/.test(xlsx), `the Excel sheet did not become a table:\n${xlsx.slice(0, 400)}`);
    });

    await check("arxiv: search answered by the local arXiv stand-in", async () => {
      const before = fixtures.requests.length;
      const res = await callOk(client, "arxiv_search", { query: "container smoke", limit: 5 });
      expect(
        fixtures.requests.slice(before).some((r) => r.startsWith("/api/query")),
        "the stand-in arXiv server got no request (ARXIV_API_URL not used?)",
      );
      expect(textOf(res).includes(PAPER_TITLE), `result lacks the stand-in paper:\n${textOf(res).slice(0, 400)}`);
    });

    await check("code: python 1+1, and the data stack imports", async () => {
      const res = await callOk(client, "code_execute", { language: "python", code: "1+1" });
      expect(textOf(res).trim() === "2", `1+1 gave:\n${textOf(res)}`);
      const stack = await callOk(client, "code_execute", {
        language: "python",
        code: "import numpy as np, pandas as pd, matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nint(pd.DataFrame({'a': np.arange(4)})['a'].sum())",
      });
      expect(textOf(stack).trim() === "6", `numpy/pandas/matplotlib gave:\n${textOf(stack)}`);
    });

    await check("code: JavaScript runs (its driver's packages are in the image)", async () => {
      const res = await callOk(client, "code_execute", { language: "javascript", code: "const xs = [1, 2, 3];\nxs.reduce((a, b) => a + b, 0) * 7" });
      expect(textOf(res).trim() === "42", `the JavaScript gave:\n${textOf(res)}`);
    });

    await check("a hub that dies is started again, and serves", async () => {
      await client.close();
      client = undefined;
      // the hub is the container's node process whose parent is the entrypoint (not one of its servers)
      const hubPid = await docker(["exec", container.id, "sh", "-c", HUB_PID]);
      expect(/^\d+$/.test(hubPid), `no hub process found: ${hubPid}`);
      await docker(["exec", container.id, "sh", "-c", `kill -KILL ${hubPid}`]);
      for (const deadline = Date.now() + 30_000; !/starting it again/.test(await logs(container));) {
        expect(Date.now() < deadline, `the entrypoint did not start the hub again:\n${tail(await logs(container))}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      container.startedAt = performance.now();
      await waitReady(container);
      client = await connect(container.origin);
      expect(textOf(await callOk(client, "file_read", { path: "smoke/doc.html" })).includes("Smoke Heading"), "the workspace survived the restart");
      const again = await docker(["exec", container.id, "sh", "-c", HUB_PID]);
      return `hub pid ${hubPid} killed, pid ${again} serving`;
    });
    await check("HEALTHCHECK turns healthy", () => waitHealthy(container));
    await client?.close();
    client = undefined;
    await check("docker stop: clean exit", () => checkCleanStop(container));
    return { readyMs };
  } finally {
    await client?.close().catch(() => {});
    await removeContainer(container);
    fs.rmSync(ws, { recursive: true, force: true });
  }
}

// --- phase 2: every capability dropped, started as agent ----------------------------------------------
async function phaseHardened(fixtures) {
  const container = await startContainer({
    image,
    env: { AGENTBOX_RATE_LIMITS: "off" },
    args: ["--cap-drop", "ALL", "--user", "agent", "--security-opt", "no-new-privileges"],
  });
  let client;
  try {
    let ready = false;
    await check("hardened (--cap-drop ALL --user agent): ready", async () => {
      const ms = await waitReady(container);
      ready = true;
      return `${(ms / 1000).toFixed(1)} s`;
    });
    if (!ready) return;
    client = await connect(container.origin);
    await check("hardened: Chromium opens and reads a page", async () => {
      await callOk(client, "browser_navigate", { url: fixtures.pageUrl });
      const text = await callOk(client, "browser_get_text", {});
      expect(textOf(text).includes(PAGE_TOKEN), `get_text lacks "${PAGE_TOKEN}":\n${textOf(text).slice(0, 400)}`);
    });
    await check("hardened: a command runs as agent and can write the workspace", async () => {
      const res = await callOk(client, "terminal_exec", { command: "id -un && touch /workspace/probe && echo wrote" });
      const out = res.structuredContent?.stdout ?? textOf(res);
      expect(out.includes("agent\nwrote"), `got:\n${out}`);
    });
    await client.close();
    client = undefined;
    await check("hardened: docker stop: clean exit", () => checkCleanStop(container));
  } finally {
    await client?.close().catch(() => {});
    await removeContainer(container);
  }
}

// --- phase 3: root without capabilities is refused with advice --------------------------------------
async function phaseRootWithoutCaps() {
  await check("root with --cap-drop ALL: refused at once with advice", async () => {
    const name = `agentbox-smoke-nocaps-${process.pid}`;
    try {
      // detached and polled, so a container that wrongly keeps running cannot hang the test
      await docker(["run", "-d", "--name", name, "--network", "host", "--cap-drop", "ALL", "-e", "AGENTBOX_HOST=127.0.0.1", "-e", "AGENTBOX_PORT=1", image]);
      const deadline = Date.now() + 30_000;
      while ((await docker(["inspect", "-f", "{{.State.Running}}", name])) === "true") {
        expect(Date.now() < deadline, `still running 30 s after docker run:\n${tail(await logs({ id: name }))}`);
        await new Promise((r) => setTimeout(r, 250));
      }
      const code = await docker(["inspect", "-f", "{{.State.ExitCode}}", name]);
      const out = await logs({ id: name });
      expect(code === "64", `exit code ${code}, expected 64:\n${out}`);
      expect(/--user agent/.test(out), `message does not say to use --user agent:\n${out}`);
    } finally {
      await docker(["rm", "-f", name], { allowFail: true });
    }
  });
}

// --- phase 4: stdio mode, as a desktop client launches it ------------------------------------------
async function phaseStdio() {
  await check("stdio (docker run -i --rm IMAGE --stdio): tools listed and a call answered", async () => {
    const client = new Client({ name: "agentbox-smoke-stdio", version: "1" });
    const transport = new StdioClientTransport({
      command: "docker",
      args: ["run", "-i", "--rm", "--network", "host", "-e", "AGENTBOX_RATE_LIMITS=off", image, "--stdio"],
      stderr: "ignore",
    });
    await client.connect(transport);
    try {
      const names = await allTools(client);
      const missing = SERVERS.filter((s) => !names.some((n) => n.startsWith(`${s}_`)));
      expect(missing.length === 0, `no tools from: ${missing.join(", ")}`);
      const result = await callOk(client, "terminal_exec", { command: "echo stdio-$((6*7))" });
      expect(textOf(result).includes("stdio-42"), `unexpected output: ${textOf(result)}`);
    } finally {
      await client.close();
    }
  });
}

async function main() {
  const fixtures = await startFixtures();
  let summary;
  try {
    summary = await phaseDefault(fixtures);
    await phaseHardened(fixtures);
    await phaseRootWithoutCaps();
    await phaseStdio();
    const helpers = { image, fixtures, check, expect, connect, callOk, textOf };
    await phaseRootHostUser(helpers);
    await phaseReadOnly(helpers);
    await phaseReplicas(helpers);
    await phaseTenants(helpers);
  } finally {
    await fixtures.close();
  }
  const size = await imageSize(image).catch(() => NaN);
  const passed = results.filter((r) => r.ok).length;
  const failed = results.length - passed;
  console.log(`image ${image}: ${(size / 1e6).toFixed(0)} MB; docker run to ready: ${((summary.readyMs ?? NaN) / 1000).toFixed(1)} s`);
  console.log(`smoke: ${passed} passed, ${failed} failed`);
  process.exitCode = failed === 0 && passed > 0 ? 0 : 1;
}

main().catch((err) => {
  console.error(`smoke test aborted: ${err?.stack ?? err}`);
  process.exitCode = 1;
});

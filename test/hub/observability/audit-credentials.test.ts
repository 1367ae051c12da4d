// Credentials the hub minted never land in what it writes down. With argument logging on, an agent
// passes each one along as agents do (a preview URL to a tool, a context handle, its session's id
// or callback token, a sealed requestState, its API key), under innocuous names, inside longer
// text and URLs, as an object key, in another case: the audit trail shows a mark where each stood,
// and no line of the hub's own log, nor of the children's it relays, shows any of them.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { sessionLabel } from "../../../hub/observability/session-label.js";
import { call, fixture, startHub, tempDir, textOf, type TestHub } from "../../helpers/hub.js";
import { postModern, samplingCall } from "../modern/modern-client.js";
import { freePort, preview, startApp, type PreviewData } from "../previews/apps.js";
import { lineWhere } from "./audit-lines.js";

const KEY = `alice-${randomBytes(16).toString("hex")}`;
const auth = { Authorization: `Bearer ${KEY}` };
const VALUE = `plain-${randomBytes(6).toString("hex")}`;

describe("the hub's own credentials in a call's arguments", () => {
  let hub: TestHub;
  let dir: string;
  let file: string;
  let alice: Client;
  let app: PreviewData;
  let handle: string;
  let sessionId: string;
  let callbackToken: string;
  let requestState: string;
  const read = () => fs.readFileSync(file, "utf8");

  before(async () => {
    dir = tempDir("agentbox-audit-");
    file = path.join(dir, "audit.log");
    hub = await startHub({
      servers: ["terminal"],
      extraServers: { echo: { ...fixture("echo-server"), env: { SESSION_CALLBACK: "1" } }, conformance: fixture("conformance-server") },
      config: { tenants: { alice: { apiKey: KEY } } },
      // debug: the children's lines that name sessions are relayed too
      env: { AGENTBOX_AUDIT_LOG: file, AGENTBOX_AUDIT_ARGUMENTS: "1", AGENTBOX_PREVIEW_DOMAIN: "localhost", AGENTBOX_LOG_LEVEL: "debug" },
    });
    alice = await hub.connect({ headers: auth, name: "alice-agent" });
    sessionId = (alice.transport as StreamableHTTPClientTransport).sessionId!;
    const port = await freePort();
    await startApp(alice, port, "alice-app");
    app = await preview(alice, port);
    handle = (await call(alice, "hub_new_context")).structuredContent!.context as string;
    callbackToken = textOf(await call(alice, "echo_token"));
    const asked = await postModern(hub, samplingCall(), auth);
    requestState = (asked.json?.result as { requestState: string }).requestState;
  });
  after(async () => {
    await hub?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test("each is redacted wherever it stands, and no log the hub wrote shows it", async () => {
    assert.ok(app.subdomainUrl && handle && callbackToken && requestState, "every credential was minted");
    const credentials: Record<string, string> = {
      previewToken: app.token,
      previewUrl: app.url,
      subdomainUrl: app.subdomainUrl,
      handle,
      sessionId,
      callbackToken,
      requestState,
      apiKey: KEY,
    };
    for (const [kind, value] of Object.entries(credentials)) {
      await call(alice, "echo_echo", {
        text: value,
        kind,
        note: `see ${value} now`,
        deep: { list: [{ href: `https://example.test/next/${value}/page?x=1` }] },
        [value]: "as a key",
      });
    }
    await call(alice, "echo_echo", { text: app.token.toUpperCase(), kind: "upperToken" });
    await call(alice, "echo_echo", { text: VALUE, kind: "plain" });
    // as agents pass them: a handle as `context`, a preview URL to run in a terminal, to hub_end_preview
    await call(alice, "hub_sessions", { context: handle });
    const terminal = await call(alice, "terminal_session_create", { context: handle });
    assert.ok(!terminal.isError, textOf(terminal));
    await call(alice, "terminal_session_send", {
      context: handle,
      id: (terminal.structuredContent as { id: string }).id,
      input: `curl -s ${app.url}\n`,
    });
    assert.ok(!(await call(alice, "hub_end_preview", { preview: app.subdomainUrl })).isError);
    await call(alice, "hub_end_session", { context: handle });
    await (alice.transport as StreamableHTTPClientTransport).terminateSession();

    const shown = await lineWhere(read, (l) => l.arguments?.kind === "previewUrl");
    assert.equal(shown.arguments?.text, app.url.replace(app.token, "[redacted]"), "the URL keeps all but the token");
    assert.equal(shown.arguments?.note, `see ${app.url.replace(app.token, "[redacted]")} now`);
    const session = await lineWhere(read, (l) => l.arguments?.kind === "sessionId");
    assert.equal(session.arguments?.note, `see [session ${sessionLabel(sessionId)}] now`, "a session id reads as the label the trail names it by");
    const contextId = handle.split(".").slice(0, -2).join(".");
    assert.equal((await lineWhere(read, (l) => l.arguments?.kind === "handle")).arguments?.text, `[session ${sessionLabel(contextId)}]`);
    for (const kind of [...Object.keys(credentials), "upperToken"]) await lineWhere(read, (l) => l.arguments?.kind === kind);
    const ended = await lineWhere(read, (l) => l.tool === "hub_end_preview");
    assert.equal(ended.outcome, "ok");
    assert.match(String(ended.arguments?.preview), /\[redacted\]/);
    await lineWhere(read, (l) => l.tool === "terminal_session_send");
    await lineWhere(read, (l) => l.tool === "hub_end_session" && l.outcome === "ok");
    await lineWhere(read, (l) => l.event === "closed" && l.session === sessionLabel(sessionId));
    assert.equal((await lineWhere(read, (l) => l.arguments?.kind === "plain")).arguments?.text, VALUE, "what is no credential is kept");

    // the random parts alone, too: what an agent could cut out of a URL, a handle or a state
    const parts = [
      app.token.slice(-26),
      app.token.toUpperCase(),
      contextId,
      handle.slice(handle.lastIndexOf(".") + 1),
      requestState.slice(requestState.lastIndexOf(".") + 1),
    ];
    for (const [where, text] of [
      ["the audit file", read()],
      ["the hub's stdout and stderr", hub.logs.join("\n")],
    ]) {
      for (const [kind, value] of [...Object.entries(credentials), ...parts.map((p, i) => [`part ${i}`, p])]) {
        assert.ok(!text.includes(value), `${where} shows the ${kind} ${value.slice(0, 12)}…`);
      }
    }
    assert.ok(
      hub.logs.some((l) => l.includes("[session ")),
      "the children's lines naming a session were relayed, with its label",
    );
  });
});

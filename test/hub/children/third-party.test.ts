// Real third-party MCP servers from npm behind the hub, configured as users write them:
// @modelcontextprotocol/server-filesystem and server-everything each started by `npx` and by a
// shell line (`bash -c "cd … && exec npx …"`). Both come from this checkout's node_modules (`npx --no-install`,
// npm offline: nothing is fetched), and run as the workspace's tenant, like any child. Real clients
// in front: the SDK v1 client (a 2025 session) and the SDK v2 client pinned to 2026-07-28, with
// the servers' own tools, errors, progress, resources, prompts and questions (sampling,
// elicitation, roots) passing through the hub.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { call, startHub, tempDir, textOf, type TestHub } from "../../helpers/hub.js";
import { npxServer } from "../../helpers/third-party.js";
import { callModern, connectModern } from "../modern/modern-client.js";

const OUTSIDE_REFUSED = /Access denied - path outside allowed directories/;

const samplingAnswer = (text: string) => ({ role: "assistant" as const, content: { type: "text" as const, text }, model: "test-model" });

describe("third-party servers from npm behind the hub", () => {
  let hub: TestHub;
  let workspace: string;
  let allowed: string;
  let outside: string;
  const closing: Array<{ close(): Promise<void> }> = [];

  before(async () => {
    workspace = tempDir("agentbox-ws-");
    allowed = path.join(workspace, "shared");
    fs.mkdirSync(allowed);
    // a file the tenant's uid may read: only the filesystem server's own rule keeps it out
    outside = path.join(workspace, "outside.txt");
    fs.writeFileSync(outside, "not for the filesystem server");
    hub = await startHub({
      workspace,
      extraServers: {
        files: npxServer("npx", "@modelcontextprotocol/server-filesystem", allowed),
        everything: npxServer("bash -c", "mcp-server-everything"),
        // and each the other way, as their READMEs and other users' configs write them
        filesbash: npxServer("bash -c", "@modelcontextprotocol/server-filesystem", allowed),
        everythingnpx: npxServer("npx", "@modelcontextprotocol/server-everything"),
      },
    });
    hub.handToTenant(allowed, outside);
  });
  after(async () => {
    await Promise.allSettled(closing.map((c) => c.close()));
    await hub?.stop();
    fs.rmSync(workspace, { recursive: true, force: true });
  });

  async function legacyClient(capabilities = {}): Promise<Client> {
    const client = await hub.connect({ capabilities });
    closing.push(client);
    return client;
  }

  test("their tools are listed under their prefixes, to a 2025 session and to a 2026-07-28 client", async () => {
    const legacy = await legacyClient();
    const modern = await connectModern(hub);
    closing.push(modern);
    for (const { tools } of [await legacy.listTools(), await modern.listTools()]) {
      const names = tools.map((t) => t.name);
      for (const name of ["files_write_file", "files_read_text_file", "files_list_allowed_directories", "everything_echo", "everything_get-sum"])
        assert.ok(names.includes(name), `${name} missing from: ${names.join(", ")}`);
    }
  });

  test("each started the other way serves the same: the filesystem server by a shell line, server-everything by npx", async () => {
    const client = await legacyClient();
    const file = path.join(allowed, "by-shell.txt");
    assert.ok(!(await call(client, "filesbash_write_file", { path: file, content: "through bash -c" })).isError);
    assert.equal(textOf(await call(client, "filesbash_read_text_file", { path: file })), "through bash -c");
    assert.match(textOf(await call(client, "filesbash_read_text_file", { path: outside })), OUTSIDE_REFUSED);
    assert.equal(textOf(await call(client, "everythingnpx_echo", { message: "through npx" })), "Echo: through npx");
    assert.equal(textOf(await call(client, "everythingnpx_get-sum", { a: 4, b: 5 })), "The sum of 4 and 5 is 9.");
  });

  test("the filesystem server writes and reads inside its folder, refuses a path outside with its own error, and the hub keeps serving", async () => {
    const client = await legacyClient();
    const file = path.join(allowed, "note.txt");
    const written = await call(client, "files_write_file", { path: file, content: "written through the hub" });
    assert.ok(!written.isError, textOf(written));
    assert.equal(fs.readFileSync(file, "utf8"), "written through the hub");
    assert.equal(textOf(await call(client, "files_read_text_file", { path: file })), "written through the hub");

    for (const attempt of [outside, path.join(allowed, "..", "outside.txt"), "/etc/passwd"]) {
      const refused = await call(client, "files_read_text_file", { path: attempt });
      assert.equal(refused.isError, true, attempt);
      assert.match(textOf(refused), OUTSIDE_REFUSED, attempt);
      assert.doesNotMatch(textOf(refused), /not for the filesystem server|root:/);
    }
    const escaped = await call(client, "files_write_file", { path: path.join(workspace, "planted.txt"), content: "x" });
    assert.match(textOf(escaped), OUTSIDE_REFUSED);
    assert.equal(fs.existsSync(path.join(workspace, "planted.txt")), false);

    assert.equal(textOf(await call(client, "files_list_allowed_directories")), `Allowed directories:\n${allowed}`);
    assert.equal(textOf(await call(client, "everything_echo", { message: "still here" })), "Echo: still here");
  });

  test("server-everything's echo, a long operation's progress, a resource and a prompt reach a 2025 session", async () => {
    const client = await legacyClient();
    assert.equal(textOf(await call(client, "everything_echo", { message: "hello" })), "Echo: hello");
    assert.equal(textOf(await call(client, "everything_get-sum", { a: 2, b: 3 })), "The sum of 2 and 3 is 5.");

    const progress: number[] = [];
    const long = (await client.callTool({ name: "everything_trigger-long-running-operation", arguments: { duration: 0.2, steps: 2 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    })) as CallToolResult;
    assert.match(textOf(long), /Long running operation completed/);
    assert.deepEqual(progress, [1, 2]);

    const read = await client.readResource({ uri: "demo://resource/dynamic/text/2" });
    assert.match(String((read.contents[0] as { text?: string }).text), /^Resource 2: /);
    const prompt = await client.getPrompt({ name: "everything_args-prompt", arguments: { city: "Paris" } });
    assert.deepEqual(prompt.messages[0]?.content, { type: "text", text: "What's weather in Paris?" });
  });

  test("server-everything's sampling, elicitation and roots reach the 2025 client that declared them", async () => {
    const client = await legacyClient({ sampling: {}, elicitation: {}, roots: {} });
    const asked: string[] = [];
    client.setRequestHandler(CreateMessageRequestSchema, async () => (asked.push("sampling"), samplingAnswer("the client's model")));
    client.setRequestHandler(ElicitRequestSchema, async () => (asked.push("elicitation"), { action: "accept", content: { name: "Ada" } }));
    client.setRequestHandler(ListRootsRequestSchema, async () => (asked.push("roots"), { roots: [{ uri: "file:///srv/project", name: "project" }] }));

    assert.match(textOf(await call(client, "everything_trigger-sampling-request", { prompt: "who are you?", maxTokens: 20 })), /the client's model/);
    assert.match(textOf(await call(client, "everything_trigger-elicitation-request")), /Name: Ada/);
    assert.match(textOf(await call(client, "everything_get-roots-list")), /file:\/\/\/srv\/project/);
    assert.deepEqual(asked, ["sampling", "elicitation", "roots"]);
  });

  test("a 2025 session that did not declare sampling gets a clear error from the question, and the hub keeps serving", async () => {
    const client = await legacyClient();
    const result = await call(client, "everything_trigger-sampling-request", { prompt: "anyone?" });
    assert.equal(result.isError, true);
    assert.match(textOf(result), /does not support sampling/);
    assert.equal(textOf(await call(client, "everything_echo", { message: "after" })), "Echo: after");
  });

  test("a 2026-07-28 client: the filesystem, progress, and server-everything's questions as input_required", async () => {
    const client = await connectModern(hub, { capabilities: { sampling: {}, elicitation: { form: {} } } });
    closing.push(client);
    client.setRequestHandler("sampling/createMessage", (async () => samplingAnswer("a 2026 model")) as never);
    client.setRequestHandler("elicitation/create", (async () => ({ action: "accept", content: { name: "Grace" } })) as never);

    const file = path.join(allowed, "modern.txt");
    assert.ok(!(await callModern(client, "files_write_file", { path: file, content: "from 2026" })).isError);
    assert.equal(textOf(await callModern(client, "files_read_text_file", { path: file })), "from 2026");
    const refused = await callModern(client, "files_read_text_file", { path: outside });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), OUTSIDE_REFUSED);

    const progress: number[] = [];
    const long = (await client.callTool(
      { name: "everything_trigger-long-running-operation", arguments: { duration: 0.2, steps: 2 } },
      { onprogress: (p: { progress: number }) => progress.push(p.progress) },
    )) as CallToolResult;
    assert.match(textOf(long), /Long running operation completed/);
    assert.deepEqual(progress, [1, 2]);

    assert.match(textOf(await callModern(client, "everything_trigger-sampling-request", { prompt: "who are you?" })), /a 2026 model/);
    assert.match(textOf(await callModern(client, "everything_trigger-elicitation-request")), /Name: Grace/);
    const read = await client.readResource({ uri: "demo://resource/dynamic/text/7" });
    assert.match(String((read.contents[0] as { text?: string }).text), /^Resource 7: /);
  });
});

// Mcp-Param-* headers on 2026-07-28 tools/call (SEP-2243): a router may act on the header alone
// (deploy/nginx routes Mcp-Param-Context to a handle's replica), so a header that is missing,
// disagrees with the body or is malformed is refused with -32020 / HTTP 400 and the tool never
// runs: for the hub's `context` argument and for a third-party child's own x-mcp-header arguments.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/client";
import { fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { callModern, connectModern, envelope, postModern, type ModernReply } from "./modern-client.js";

const toolCall = (name: string, args: Record<string, unknown>) => ({ id: 1, method: "tools/call", params: { name, arguments: args, _meta: envelope() } });
const base64 = (text: string) => `=?base64?${Buffer.from(text, "utf8").toString("base64")}?=`;

function assertMismatch(reply: ModernReply, header: RegExp): void {
  assert.equal(reply.res.status, 400, reply.text);
  assert.equal(reply.json?.error?.code, -32020, reply.text);
  assert.match(reply.json?.error?.message ?? "", header);
}

describe("Mcp-Param-* headers of 2026-07-28 tool calls", () => {
  let hub: TestHub;
  let client: Client;
  let first: string;
  let second: string;

  before(async () => {
    hub = await startHub({ servers: ["terminal"], extraServers: { tagger: fixture("param-header-server") } });
    client = await connectModern(hub);
    await client.listTools();
    const mint = async () => ((await callModern(client, "hub_new_context")).structuredContent as { context: string }).context;
    first = await mint();
    second = await mint();
  });
  after(async () => {
    await client?.close();
    await hub?.stop();
  });

  const tally = async () => (JSON.parse(textOf(await callModern(client, "tagger_tally"))) as { tagged: number }).tagged;
  const terminals = async (context: string) => (await callModern(client, "terminal_session_list", { context })).structuredContent as { sessions?: unknown[] };

  test("a context in the body without its Mcp-Param-Context header, or with another handle's, is refused and opens no terminal", async () => {
    const before = [JSON.stringify(await terminals(first)), JSON.stringify(await terminals(second))];
    assertMismatch(await postModern(hub, toolCall("terminal_session_create", { context: first })), /Mcp-Param-Context header is absent/);
    assertMismatch(
      await postModern(hub, toolCall("terminal_session_create", { context: first }), { "Mcp-Param-Context": second }),
      /Mcp-Param-Context header says .* but the body carries context=/,
    );
    assertMismatch(await postModern(hub, toolCall("terminal_session_create", { context: first }), { "Mcp-Param-Context": "=?base64?%%%?=" }), /invalid Base64/);
    assert.deepEqual([JSON.stringify(await terminals(first)), JSON.stringify(await terminals(second))], before);
  });

  test("a header that agrees, plain or Base64-wrapped, lets the call run in that context", async () => {
    const plain = await postModern(hub, toolCall("terminal_session_list", { context: first }), { "Mcp-Param-Context": first });
    assert.equal(plain.res.status, 200, plain.text);
    assert.equal(plain.json?.result?.isError, undefined, plain.text);
    const wrapped = await postModern(hub, toolCall("terminal_session_list", { context: second }), { "Mcp-Param-Context": base64(second) });
    assert.equal(wrapped.res.status, 200, wrapped.text);
  });

  test("a third-party child's own x-mcp-header arguments are checked too, and the tool never runs on a mismatch", async () => {
    const start = await tally();
    const tag = (args: Record<string, unknown>, headers: Record<string, string>) => postModern(hub, toolCall("tagger_tag", args), headers);
    assertMismatch(await tag({ region: "eu" }, {}), /Mcp-Param-Region header is absent/);
    assertMismatch(await tag({ region: "eu" }, { "Mcp-Param-Region": "us" }), /Mcp-Param-Region header says "us" but the body carries region="eu"/);
    assertMismatch(await tag({ region: "eu", priority: 7 }, { "Mcp-Param-Region": "eu", "Mcp-Param-Priority": "8" }), /Mcp-Param-Priority/);
    assertMismatch(await tag({ region: "é" }, { "Mcp-Param-Region": "=?base64?w6k?=" }), /invalid Base64/);
    assert.equal(await tally(), start, "no refused call ran");

    // agreeing headers: Base64 of UTF-8, and an integer written as a decimal compares as a number
    const ok = await tag({ region: "é", priority: 7 }, { "Mcp-Param-Region": base64("é"), "Mcp-Param-Priority": "7.0" });
    assert.equal(ok.res.status, 200, ok.text);
    // a header whose argument is absent is not looked at
    const absent = await tag({ note: "x" }, { "Mcp-Param-Region": "anything" });
    assert.equal(absent.res.status, 200, absent.text);
    assert.equal(await tally(), start + 2);
  });

  test("the real 2026 client mirrors the headers itself, so its calls pass", async () => {
    const result = await callModern(client, "tagger_tag", { region: "ünïcode region", priority: 3 });
    assert.notEqual(result.isError, true, textOf(result));
    const inContext = await callModern(client, "terminal_session_list", { context: first });
    assert.notEqual(inContext.isError, true, textOf(inContext));
  });
});

// The skills extension (SEP-2640) through the hub, with the SDK clients of both eras: agentbox's
// own skills (one per built-in server), a server's skills under its prefix so that two servers
// serving the same skill URI stay two skills, skills/get and resources/read routed back to the
// server that serves a skill, and a session's selection narrowing its skills as its tools.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, test } from "node:test";
import * as z from "zod/v4";
import type { Client as ModernClient } from "@modelcontextprotocol/client";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { fixture, startHub, type TestHub } from "../../helpers/hub.js";
import { connectModern } from "../modern/modern-client.js";

const SKILLS = "io.modelcontextprotocol/skills";
const Entry = z.object({
  uri: z.string(),
  frontmatter: z.object({ name: z.string(), description: z.string() }).loose(),
  resources: z.union([z.literal("dynamic"), z.array(z.object({ uri: z.string(), digest: z.string(), size: z.number() }))]),
});
const ListResult = z.object({ skills: z.array(Entry), ttlMs: z.number(), cacheScope: z.string() }).loose();
const GetResult = z.object({ skill: Entry, ttlMs: z.number(), cacheScope: z.string() }).loose();
type SkillEntry = z.infer<typeof Entry>;

/** What a test asks of a client of either era. */
interface Skills {
  list(): Promise<SkillEntry[]>;
  get(uri: string): Promise<SkillEntry>;
  read(uri: string): Promise<string>;
  declared(): unknown;
  close(): Promise<void>;
}

const oldEra = (client: Client): Skills => ({
  list: async () => ((await client.request({ method: "skills/list", params: {} } as never, ListResult as never)) as z.infer<typeof ListResult>).skills,
  get: async (uri) => ((await client.request({ method: "skills/get", params: { uri } } as never, GetResult as never)) as z.infer<typeof GetResult>).skill,
  read: async (uri) => String((await client.readResource({ uri })).contents.map((c) => ("text" in c ? c.text : ""))[0]),
  declared: () => (client.getServerCapabilities() as { extensions?: Record<string, unknown> } | undefined)?.extensions?.[SKILLS],
  close: () => client.close(),
});

const modernEra = (client: ModernClient): Skills => ({
  list: async () => (await client.request({ method: "skills/list", params: {} }, ListResult)).skills,
  get: async (uri) => (await client.request({ method: "skills/get", params: { uri } }, GetResult)).skill,
  read: async (uri) => String((await client.readResource({ uri })).contents.map((c) => ("text" in c ? c.text : ""))[0]),
  declared: () => (client.getServerCapabilities() as { extensions?: Record<string, unknown> } | undefined)?.extensions?.[SKILLS],
  close: () => client.close(),
});

const digestOf = (text: string) => `sha256:${createHash("sha256").update(Buffer.from(text)).digest("hex")}`;

describe("skills through the hub", () => {
  let hub: TestHub;
  before(async () => {
    hub = await startHub({
      servers: ["browser", "terminal"],
      extraServers: {
        alpha: { ...fixture("skills-server"), env: { AGENTBOX_FIXTURE_SKILL_FROM: "alpha" } },
        beta: { ...fixture("skills-server"), env: { AGENTBOX_FIXTURE_SKILL_FROM: "beta" } },
      },
    });
  });
  after(() => hub.stop());

  const eras: Array<[string, (query?: string) => Promise<Skills>]> = [
    ["2025", async (query = "") => oldEra(await hub.connect({ path: `/mcp${query}` }))],
    ["2026", async (query = "") => modernEra(await connectModern(hub, { query }))],
  ];

  for (const [era, connect] of eras) {
    test(`${era}: the extension is declared, and every server's skills are listed, each with its server's prefix`, async () => {
      const client = await connect();
      assert.deepEqual(client.declared(), {});
      const skills = await client.list();
      const uris = skills.map((s) => s.uri).sort();
      assert.deepEqual(uris, [
        "skill://alpha/release-notes/SKILL.md",
        "skill://beta/release-notes/SKILL.md",
        "skill://hub/browser/SKILL.md",
        "skill://hub/terminal/SKILL.md",
      ]);
      for (const skill of skills) assert.equal(skill.uri.split("/").at(-2), skill.frontmatter.name, "the last segment is the skill's name");
      await client.close();
    });

    test(`${era}: two servers' skills of one URI stay apart: get and read reach the server each came from, digests hold`, async () => {
      const client = await connect();
      for (const server of ["alpha", "beta"]) {
        const uri = `skill://${server}/release-notes/SKILL.md`;
        const skill = await client.get(uri);
        assert.equal(skill.uri, uri);
        assert.match(skill.frontmatter.description, new RegExp(`the way ${server} does`));
        const text = await client.read(uri);
        assert.match(text, new RegExp(`served by ${server}\\.`));
        assert.deepEqual(skill.resources, [{ uri, digest: digestOf(text), size: Buffer.byteLength(text) }]);
      }
      await client.close();
    });

    test(`${era}: agentbox's own skills are fetched whole and teach their server's tools`, async () => {
      const client = await connect();
      const uri = "skill://hub/browser/SKILL.md";
      const skill = await client.get(uri);
      const text = await client.read(uri);
      assert.match(text, /^---\nname: browser\ndescription: /);
      assert.match(text, /browser_snapshot|browser_navigate/);
      assert.match(text, /offset=nextOffset/);
      assert.deepEqual(skill.resources, [{ uri, digest: digestOf(text), size: Buffer.byteLength(text) }]);
      assert.match(await client.read("skill://hub/terminal/SKILL.md"), /terminal_exec[\s\S]*terminal_session_create/);
      await client.close();
    });

    test(`${era}: ?servers=browser sees only the browser's skill, and cannot fetch another's`, async () => {
      const client = await connect("?servers=browser");
      assert.deepEqual(
        (await client.list()).map((s) => s.uri),
        ["skill://hub/browser/SKILL.md"],
      );
      for (const uri of ["skill://hub/terminal/SKILL.md", "skill://alpha/release-notes/SKILL.md"]) {
        await assert.rejects(() => client.get(uri), /No skill at/);
      }
      await client.close();
    });
  }

  test("an unknown skill URI is -32602, the hub's code (not a server's) for no such skill", async () => {
    const client = oldEra(await hub.connect());
    await assert.rejects(
      () => client.get("skill://alpha/no-such/SKILL.md"),
      (err: { code?: number }) => err.code === -32602,
    );
    await assert.rejects(
      () => client.get("skill://nobody/x/SKILL.md"),
      (err: { code?: number; message: string }) => err.code === -32602 && /skills\/list shows/.test(err.message),
    );
    await client.close();
  });
});

// The skills extension (SEP-2640) across a tenant's servers: the hub's own skills (one per
// built-in server, ../catalog/builtin-skills.ts) and those of every selected server that declares
// the extension, merged into one skills/list. A skill is its server plus its URI, so two servers
// may serve the same skill://x/SKILL.md: the hub publishes a server's skill:// URIs under that
// server's prefix (skill://x/SKILL.md of the server prefixed "docs" is skill://docs/x/SKILL.md; the
// skill's name, the last segment, is kept), and takes the prefix off again to send skills/get or
// resources/read of such a URI back to that server. A server's skills under another scheme cannot
// be told apart from another's the same way: they are left out (and logged).
import type { ReadResourceResult } from "@modelcontextprotocol/sdk/types.js";
import { SESSION_META_KEY } from "../../servers/lib/session-events.js";
import { errorMessage } from "../../servers/lib/log.js";
import { LISTED_STATES, type Child } from "../children/child.js";
import { BUILTIN_SKILLS, HUB_SKILL_PREFIX, type SkillEntry } from "../catalog/builtin-skills.js";
import { SKILLS_EXTENSION } from "../protocol/extensions.js";
import { protocolError } from "../protocol/jsonrpc.js";
import { forward, type Params } from "./forward.js";
import type { SessionView } from "../catalog/selection.js";
import type { CallChannel, ClientSession } from "./registry.js";
import type { SessionServices } from "./services.js";

/** What the skills are answered with: the hub and the session, seen through the request's view (./handlers.ts HandlerCtx is one). */
interface HandlerCtx {
  hub: SessionServices;
  session: ClientSession;
  view: SessionView;
}

const SCHEME = "skill://";
/** Skills answer one tenant through one selection, from servers that may change them at any time: nobody else may keep them. */
const CACHE = { ttlMs: 0, cacheScope: "private" } as const;
/** Pages of one server's skills/list the hub reads at most. */
const MAX_PAGES = 20;

/** The hub's own skills a view shows: those of the built-in servers it selects that this tenant runs. */
function hubSkills({ session, view }: HandlerCtx) {
  const running = new Set(session.tenant.children.filter((c) => c.enabled).map((c) => c.name));
  return BUILTIN_SKILLS.filter((s) => running.has(s.server) && view.allowsServer(s.server));
}

/** The selected servers that serve skills. */
function skillServers({ session, view }: HandlerCtx): Child[] {
  return session.tenant.children.filter((c) => LISTED_STATES.has(c.state) && view.allowsServer(c.name) && c.prefix !== HUB_SKILL_PREFIX && declaresSkills(c));
}

function declaresSkills(child: Child): boolean {
  const extensions = (child.capabilities as { extensions?: Record<string, unknown> }).extensions;
  return typeof extensions === "object" && extensions !== null && extensions[SKILLS_EXTENSION] !== undefined;
}

/** A server's URI as the hub publishes it, or undefined for a scheme the hub cannot namespace. */
const published = (child: Child, uri: string) => (uri.startsWith(SCHEME) ? `${SCHEME}${child.prefix}/${uri.slice(SCHEME.length)}` : undefined);

/** A published URI's server and the URI that server knows, when it is one of a selected server's. */
function owner(ctx: HandlerCtx, uri: string): { child: Child; original: string } | undefined {
  if (!uri.startsWith(SCHEME)) return undefined;
  const rest = uri.slice(SCHEME.length);
  const slash = rest.indexOf("/");
  if (slash <= 0) return undefined;
  const child = skillServers(ctx).find((c) => c.prefix === rest.slice(0, slash));
  return child && { child, original: SCHEME + rest.slice(slash + 1) };
}

/** A server's entry with its URIs published, or undefined when one of them cannot be. */
function publishEntry(child: Child, entry: SkillEntry): SkillEntry | undefined {
  const uri = published(child, entry.uri);
  if (!uri) return undefined;
  if (entry.resources === "dynamic") return { ...entry, uri };
  if (!Array.isArray(entry.resources)) return undefined;
  const resources = entry.resources.map((r) => ({ ...r, uri: published(child, r.uri) }));
  if (resources.some((r) => !r.uri)) return undefined;
  return { ...entry, uri, resources: resources as Array<{ uri: string; digest: string; size: number }> };
}

async function skillsOf(ctx: HandlerCtx, child: Child): Promise<SkillEntry[]> {
  const skills: SkillEntry[] = [];
  let cursor: string | undefined;
  try {
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = (await child.request("skills/list", { ...(cursor ? { cursor } : {}), _meta: { [SESSION_META_KEY]: ctx.session.id } })) as {
        skills?: SkillEntry[];
        nextCursor?: string;
      };
      for (const entry of Array.isArray(result.skills) ? result.skills : []) {
        const shown = publishEntry(child, entry);
        if (shown) skills.push(shown);
        else ctx.hub.log.warn("a skill is left out: the hub publishes skill:// URIs only", { server: child.name, uri: String(entry?.uri) });
      }
      cursor = result.nextCursor;
      if (!cursor) break;
    }
  } catch (err) {
    ctx.hub.log.warn("skills/list failed", { server: child.name, error: errorMessage(err) });
  }
  return skills;
}

/** skills/list: the hub's skills for the view's servers, then every selected server's, in one page. */
export async function listSkills(ctx: HandlerCtx) {
  const children = await Promise.all(skillServers(ctx).map((child) => skillsOf(ctx, child)));
  return { skills: [...hubSkills(ctx).map((s) => s.entry), ...children.flat()], ...CACHE };
}

/** skills/get of a published URI: the hub's own, or sent back to its server with the URI it knows. */
export async function getSkill(ctx: HandlerCtx, params: { uri: string }, channel: CallChannel) {
  const own = hubSkills(ctx).find((s) => s.entry.uri === params.uri);
  if (own) return { skill: own.entry, ...CACHE };
  const found = owner(ctx, params.uri);
  if (!found) throw unknownSkill(params.uri);
  const result = (await forward(found.child, "skills/get", params as Params, ctx.session, channel, { uri: found.original })) as { skill?: SkillEntry };
  const skill = result.skill && publishEntry(found.child, result.skill);
  if (!skill) throw unknownSkill(params.uri);
  return { skill, ...CACHE };
}

/** resources/read of a skill's file: the hub's own text, a server's file read with the URI it knows, or undefined for any other URI. */
export async function readSkillFile(ctx: HandlerCtx, params: { uri: string }, channel: CallChannel): Promise<ReadResourceResult | undefined> {
  const own = hubSkills(ctx).find((s) => s.entry.uri === params.uri);
  if (own) return { contents: [{ uri: own.entry.uri, mimeType: "text/markdown", text: own.text }] };
  const found = owner(ctx, params.uri);
  if (!found) return undefined;
  const result = (await forward(found.child, "resources/read", params as Params, ctx.session, channel, { uri: found.original })) as ReadResourceResult;
  return { ...result, contents: (result.contents ?? []).map((c) => ({ ...c, uri: published(found.child, c.uri) ?? params.uri })) };
}

function unknownSkill(uri: string) {
  return protocolError(-32602, `No skill at ${uri}. skills/list shows the skills of this session's servers; a skill's URI names its SKILL.md.`, { uri });
}

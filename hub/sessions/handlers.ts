// What a client's requests (other than tools/call, ./tool-calls.ts) are answered with, whichever
// protocol era asked: the 2025 session server (./server.ts) and the 2026-07-28 per-request server
// (hub/modern/server.ts) register these same functions, so the eras cannot drift apart. Each takes
// the hub and session seen through a view, the request's params, and the call's way back.
import type { GetPromptRequest, ReadResourceRequest, CompleteRequest, SubscribeRequest, UnsubscribeRequest } from "@modelcontextprotocol/sdk/types.js";
import { forward, type Params } from "./forward.js";
import type { SessionServices } from "./services.js";
import { HUB_INSTRUCTIONS, mergeInstructions, selectedServers } from "../catalog/instructions.js";
import { protocolError, RATE_LIMITED_CODE } from "../protocol/jsonrpc.js";
import { childUri, knownOwner, listResources, resourceOwner } from "./resources.js";
import { withPublishedUris } from "../catalog/app-uris.js";
import type { CallChannel, ClientSession } from "./registry.js";
import type { RequestBase } from "../previews/public-address.js";
import type { SessionView } from "../catalog/selection.js";
import { unknownName } from "./tool-calls.js";
import { formatRange, type PortRange } from "../config/network.js";
import { NAME_WAIT_MS, untilStarted } from "../catalog/starting.js";
import { getSkill, listSkills, readSkillFile } from "./skills.js";
import { SKILLS_EXTENSION } from "../protocol/extensions.js";
import { LIVE_APP_URI, liveAppListing, readLiveApp, rendersApps, withAppMeta } from "../live/app-resource.js";

/** What the client declared: a 2025 session's at initialize, a 2026 request's in its envelope (passed in). */
type Declared = Record<string, unknown> | undefined;

/** What every handler works with: the hub and the session, seen through the view of this request or session. */
export interface HandlerCtx {
  hub: SessionServices;
  session: ClientSession;
  view: SessionView;
  /** The address the request reached the hub by, where the context is one request's (2026-07-28); a 2025 session's requests each carry their own. */
  requestBase?: RequestBase;
}

/** What the hub serves, in either era (logging: set by logging/setLevel in 2025, by each request's envelope in 2026-07-28). */
export const HUB_CAPABILITIES = {
  tools: { listChanged: true },
  resources: { listChanged: true, subscribe: true },
  prompts: { listChanged: true },
  logging: {},
  completions: {},
  // agentbox's own skills and its servers' (./skills.ts); the 2026 server adds the tasks extension beside it
  extensions: { [SKILLS_EXTENSION]: {} },
} as const;

/** Who answers, in every 2026-07-28 result's _meta (the SDK stamps it): the same for the SDK's servers, the direct path and the tasks extension's replies. */
export const serverInfoOf = (hub: { version: string }) => ({ name: "agentbox", version: hub.version, title: "agentbox" });

/** The hub's instructions for a session's view: the selection hook may add to the hub's sentence (search mode: how to find tools). */
export function hubInstructions({ session, view }: HandlerCtx): string {
  return mergeInstructions(view.instructions(HUB_INSTRUCTIONS + portsSentence(session.tenant.network?.ports)), selectedServers(session.tenant.children, view));
}

/** A confined tenant is told its ports up front: a dev server on 3000 or 5173 would be refused. */
function portsSentence(ports: PortRange | undefined): string {
  if (!ports) return "";
  return ` Programs you start may listen only on TCP ports ${formatRange(ports)} ($PORT is the first); other ports, port 0 included, are refused.`;
}

export async function checkMethodLimit({ hub, session }: HandlerCtx, method: string): Promise<void> {
  const verdict = await hub.limits.checkMethod(session.budget, method);
  if (verdict.allowed) return;
  hub.metrics.rateLimited.inc({ kind: "method", name: method });
  const seconds = Math.ceil(verdict.retryAfterMs / 1000);
  throw protocolError(RATE_LIMITED_CODE, `Rate limit for ${method} reached (${verdict.rule}); retry in ${seconds} s.`, { retryAfterMs: verdict.retryAfterMs });
}

/** A prompt by published name, if the view's selection includes its server (one still starting may bring it). */
async function selectedPrompt(ctx: HandlerCtx, name: string) {
  const { session, view } = ctx;
  const find = () => {
    const owner = session.tenant.catalog.prompt(name);
    return owner && view.allowsServer(owner.child.name) ? owner : undefined;
  };
  const owner = find() ?? (await namedServersStarted(ctx), find());
  if (owner) return owner;
  throw unknownName("prompt", name, session.tenant.catalog.suggestPrompts(name));
}

/** The servers the view shows that are starting for the first time, waited for before a name they may bring is called unknown. */
function namedServersStarted({ hub, session, view }: HandlerCtx): Promise<void> {
  return untilStarted(session.tenant.children, (server) => view.allowsServer(server), hub.clock, NAME_WAIT_MS);
}

/** A resource URI's owner: as known, else once the servers still starting are up (a template's server brings its templates). */
async function ownerOnceKnown(ctx: HandlerCtx, uri: string) {
  return knownOwner(ctx.session, ctx.view, uri) ?? (await namedServersStarted(ctx), knownOwner(ctx.session, ctx.view, uri));
}

/** A list asked for in the hub's first seconds waits (briefly) for the servers it would show that are still starting (../catalog/starting.ts). */
function serversStarted({ hub, session, view }: HandlerCtx): Promise<void> {
  return untilStarted(session.tenant.children, (server) => view.allowsServer(server), hub.clock);
}

export async function listTools(ctx: HandlerCtx, declared: Declared = ctx.session.clientCapabilities) {
  await checkMethodLimit(ctx, "tools/list");
  await serversStarted(ctx);
  const tools = ctx.view.listTools();
  // the live view app (hub/live/app-resource.ts) only for hosts that render MCP Apps
  return { tools: rendersApps(declared) ? withAppMeta(tools) : tools };
}

export async function listPrompts(ctx: HandlerCtx) {
  await checkMethodLimit(ctx, "prompts/list");
  await serversStarted(ctx);
  const { catalog } = ctx.session.tenant;
  return { prompts: catalog.prompts.filter((p) => ctx.view.allowsServer(catalog.prompt(p.name)!.child.name)) };
}

export async function getPrompt(ctx: HandlerCtx, params: GetPromptRequest["params"], channel: CallChannel) {
  await checkMethodLimit(ctx, "prompts/get");
  const owner = await selectedPrompt(ctx, params.name);
  return forward(owner.child, "prompts/get", params, ctx.session, channel, { name: owner.original });
}

export async function listAllResources(ctx: HandlerCtx, declared: Declared = ctx.session.clientCapabilities, base = ctx.requestBase) {
  await checkMethodLimit(ctx, "resources/list");
  await serversStarted(ctx);
  const resources = await listResources(ctx.session, ctx.view, ctx.hub.log);
  return { resources: rendersApps(declared) ? [...resources, liveAppListing(ctx.hub.live.base(base?.()))] : resources };
}

export async function listResourceTemplates(ctx: HandlerCtx) {
  await checkMethodLimit(ctx, "resources/templates/list");
  await serversStarted(ctx);
  const templates = ctx.session.tenant.catalog.resourceTemplates().filter((t) => ctx.view.allowsServer(t.child.name));
  return { resourceTemplates: templates.map((t) => t.template) };
}

export async function readResource(ctx: HandlerCtx, params: ReadResourceRequest["params"], channel: CallChannel) {
  await checkMethodLimit(ctx, "resources/read");
  if (params.uri === LIVE_APP_URI) return readLiveApp(ctx.hub.live.base(channel.requestBase?.()));
  const skillFile = await readSkillFile(ctx, params, channel);
  if (skillFile) return skillFile;
  await ownerOnceKnown(ctx, params.uri);
  const owner = resourceOwner(ctx.session, ctx.view, params.uri);
  const result = await forward(owner, "resources/read", params as Params, ctx.session, channel, { uri: childUri(owner, params.uri) });
  // what it read names the URI as published (an MCP App's under its server's prefix: ../catalog/app-uris.ts)
  const contents = (result as { contents?: unknown }).contents;
  return Array.isArray(contents) ? { ...result, contents: withPublishedUris(contents as Array<{ uri: string }>, owner.prefix) } : result;
}

export async function listAllSkills(ctx: HandlerCtx) {
  await checkMethodLimit(ctx, "skills/list");
  await serversStarted(ctx);
  return listSkills(ctx);
}

export async function getOneSkill(ctx: HandlerCtx, params: { uri: string }, channel: CallChannel) {
  await checkMethodLimit(ctx, "skills/get");
  return getSkill(ctx, params, channel);
}

/** Subscriptions one session may hold, and the longest URI one may name: each is kept here, and its server may keep a watch for it. */
export const MAX_SUBSCRIPTIONS = 1000;
export const MAX_SUBSCRIBED_URI = 8192;

export async function subscribe(ctx: HandlerCtx, params: SubscribeRequest["params"], channel: CallChannel) {
  if (params.uri.length > MAX_SUBSCRIBED_URI) {
    throw protocolError(-32602, `A subscribed URI may be at most ${MAX_SUBSCRIBED_URI} characters long; this one has ${params.uri.length}.`);
  }
  await ownerOnceKnown(ctx, params.uri);
  const owner = resourceOwner(ctx.session, ctx.view, params.uri);
  const { subscriptions } = ctx.session;
  if (!subscriptions.has(params.uri) && subscriptions.size >= MAX_SUBSCRIPTIONS) {
    throw protocolError(-32602, `This session already holds ${MAX_SUBSCRIPTIONS} resource subscriptions; unsubscribe some first (or subscribe to a folder).`);
  }
  // kept only once its server took it: a refused subscription is not held
  if (owner.capabilities.resources?.subscribe)
    await forward(owner, "resources/subscribe", params as Params, ctx.session, channel, { uri: childUri(owner, params.uri) });
  subscriptions.add(params.uri);
  return {};
}

export async function unsubscribe(ctx: HandlerCtx, params: UnsubscribeRequest["params"], channel: CallChannel) {
  ctx.session.subscriptions.delete(params.uri);
  const owner = knownOwner(ctx.session, ctx.view, params.uri);
  if (owner?.capabilities.resources?.subscribe) {
    await forward(owner, "resources/unsubscribe", params as Params, ctx.session, channel, { uri: childUri(owner, params.uri) }).catch(() => undefined);
  }
  return {};
}

export async function complete(ctx: HandlerCtx, params: CompleteRequest["params"], channel: CallChannel) {
  const ref = params.ref as { type: string; name?: string; uri?: string };
  if (ref.type === "ref/prompt") {
    const owner = await selectedPrompt(ctx, ref.name ?? "");
    return forward(owner.child, "completion/complete", params, ctx.session, channel, { ref: { ...ref, name: owner.original } });
  }
  const owner = await ownerOnceKnown(ctx, ref.uri ?? "");
  if (!owner) return { completion: { values: [], hasMore: false } };
  return forward(owner, "completion/complete", params as Params, ctx.session, channel, { ref: { ...ref, uri: childUri(owner, ref.uri ?? "") } });
}

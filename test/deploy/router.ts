// Real nginx with the shipped config (deploy/nginx/run.mjs) in front of real test hubs, and what
// the tests through it ask: which replica a 2026 request with a given API key reaches.
import assert from "node:assert/strict";
import path from "node:path";
import { after, before } from "node:test";
import { pathToFileURL } from "node:url";
import { distRoot } from "../../hub/config/config.js";
import type { TestHub } from "../helpers/hub.js";
import { envelope, postModern } from "../hub/modern/modern-client.js";

export interface Router {
  origin: string;
  errorLog(): string;
  stop(): Promise<void>;
}
type RunModule = { startRouter(options: { replicas: Array<{ name: string; address: string }> }): Promise<Router> };

/** nginx routing to these hubs, each by its AGENTBOX_REPLICA name. */
export async function routeTo(hubs: ReadonlyMap<string, TestHub>): Promise<Router> {
  const run = (await import(pathToFileURL(path.join(distRoot(), "..", "deploy", "nginx", "run.mjs")).href)) as RunModule;
  return run.startRouter({ replicas: [...hubs].map(([name, hub]) => ({ name, address: new URL(hub.origin).host })) });
}

export const auth = (key: string) => ({ Authorization: `Bearer ${key}` });
/** Where postModern and connectModern send their requests: only the URL of a TestHub is read. */
export const endpoint = (origin: string) => ({ url: `${origin}/mcp` }) as TestHub;

/** The replica a 2026 request with this key reaches (hub_status says which). */
export async function replicaFor(origin: string, key: string): Promise<string> {
  const status = await postModern(endpoint(origin), { id: 9, method: "tools/call", params: { name: "hub_status", arguments: {}, _meta: envelope() } }, auth(key));
  assert.equal(status.res.status, 200, status.text);
  return String((status.json?.result?.structuredContent as { replica?: string })?.replica);
}

/** A key the router's hash sends to each replica, found by asking. */
export async function keyPerReplica(origin: string, names: string[]): Promise<Map<string, string>> {
  const keyOn = new Map<string, string>();
  for (let i = 0; keyOn.size < names.length; i++) {
    assert.ok(i < 100, `100 keys did not reach every replica: ${JSON.stringify([...keyOn])}`);
    const key = `agent-${i}`;
    const replica = await replicaFor(origin, key);
    if (!keyOn.has(replica)) keyOn.set(replica, key);
  }
  return keyOn;
}

/** GET / through the router with these headers: which replica answered, or the router's own refusal. */
export async function rootWith(
  origin: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: { replica?: string; error?: { code: number; message: string } } }> {
  const res = await fetch(`${origin}/`, { headers });
  return { status: res.status, body: (await res.json()) as { replica?: string; error?: { code: number; message: string } } };
}

export interface Replicas {
  /** Each hub by its replica name (a test that restarts one puts the new hub here, to be stopped after). */
  hubs: Map<string, TestHub>;
  router: Router;
  /** A key the router's hash sends to each replica. */
  keyOn: Map<string, string>;
}

/** Within a describe: hubs started by `start` under these replica names, nginx in front, stopped after the suite. */
export function replicasBehindNginx(names: string[], start: (name: string) => Promise<TestHub>): Replicas {
  const replicas = { hubs: new Map<string, TestHub>() } as Replicas;
  before(async () => {
    const started = await Promise.all(names.map((name) => start(name)));
    started.forEach((hub, i) => replicas.hubs.set(names[i], hub));
    replicas.router = await routeTo(replicas.hubs);
    replicas.keyOn = await keyPerReplica(replicas.router.origin, names);
  });
  after(async () => {
    await replicas.router?.stop();
    await Promise.allSettled([...replicas.hubs.values()].map((h) => h.stop()));
  });
  return replicas;
}

// The echo fixture behind every contender, started once per benchmark so that all ratios come
// from the same run: straight over stdio, through the hub (the SDK client's default, and a client
// accepting only JSON), behind both peers, and served by the SDK itself over HTTP with no hop at
// all (the floor). A peer that cannot start is recorded with the reason instead of a number.
import fs from "node:fs";
import { errorMessage } from "../servers/lib/log.js";
import {
  connectEchoDirect,
  connectHttp,
  echoServer,
  startHub,
  startMcpProxy,
  startSdkFloor,
  startSupergateway,
  tempDir,
  type Connection,
  type HttpTarget,
  type ReplyMode,
} from "./targets.js";

export interface HttpVariant {
  /** Result key: hub, hub-json, sdk-floor, supergateway, mcp-proxy. */
  key: string;
  label: string;
  target: HttpTarget;
  tool: string;
  mode: ReplyMode;
  connect(): Promise<Connection>;
}

export interface EchoSetup {
  workspace: string;
  direct: Connection & { pid: number };
  hub: HttpTarget;
  variants: HttpVariant[];
  unavailable: Record<string, string>;
  stop(): Promise<void>;
}

export const ECHO_ARGS = { text: "ping" };

const PEER_LABELS = {
  "sdk-floor": "floor: echo served over HTTP by the SDK itself (no hop)",
  supergateway: "supergateway",
  "mcp-proxy": "mcp-proxy",
};

export async function setupEcho(options: { json?: boolean; peers?: boolean } = {}): Promise<EchoSetup> {
  const workspace = tempDir("agentbox-bench-echo-");
  const targets: HttpTarget[] = [];
  const unavailable: Record<string, string> = {};
  const direct = await connectEchoDirect(workspace);
  const hub = await startHub({ servers: { echo: echoServer() }, workspace });
  targets.push(hub);
  const variant = (key: string, label: string, target: HttpTarget, tool: string, mode: ReplyMode): HttpVariant => ({
    key,
    label,
    target,
    tool,
    mode,
    connect: () => connectHttp(target.url, mode),
  });
  const variants = [variant("hub", "agentbox (SDK client)", hub, "echo_echo", "default")];
  if (options.json !== false) variants.push(variant("hub-json", "agentbox (client accepting only JSON)", hub, "echo_echo", "json"));
  if (options.peers !== false) {
    for (const [key, startPeer] of [
      ["sdk-floor", startSdkFloor],
      ["supergateway", startSupergateway],
      ["mcp-proxy", startMcpProxy],
    ] as const) {
      try {
        const peer = await startPeer(workspace);
        targets.push(peer);
        const v = variant(key, PEER_LABELS[key], peer, "echo", "default");
        // prove the peer works before measuring it
        const probe = await v.connect();
        await probe.client.callTool({ name: v.tool, arguments: ECHO_ARGS });
        await probe.close();
        variants.push(v);
      } catch (err) {
        unavailable[key] = errorMessage(err).split("\n")[0];
      }
    }
  }
  return {
    workspace,
    direct,
    hub,
    variants,
    unavailable,
    async stop() {
      await direct.close().catch(() => undefined);
      await Promise.allSettled(targets.map((t) => t.stop()));
      fs.rmSync(workspace, { recursive: true, force: true });
    },
  };
}

// node dist/bench/relay-server.js <port> <command> [args...]: the cheapest honest way to put a
// stdio MCP server behind HTTP, the yardstick of bench/relay.ts (issue 17). One child, started
// and initialized once; every POST is parsed, given an id of the relay's own (clients' ids may
// collide), written to the child as one line, and the child's reply is mapped back to the
// caller's id and sent as JSON. No sessions, no validation, no SSE, no auth: what any relay must
// do at least, so the hub's CPU per call can be compared with it.
import { spawn } from "node:child_process";
import http from "node:http";
import readline from "node:readline";

type Message = { jsonrpc: "2.0"; id?: string | number | null; method?: string; [key: string]: unknown };

const [portArg, command, ...args] = process.argv.slice(2);
if (!portArg || !command) {
  process.stderr.write("usage: relay-server.js <port> <command> [args...]\n");
  process.exit(2);
}

const child = spawn(command, args, { stdio: ["pipe", "pipe", "ignore"] });
child.on("exit", (code) => {
  process.stderr.write(`relay: child exited (${code})\n`);
  process.exit(1);
});

/** Calls waiting for the child, by the relay's id: the caller's id and where to answer. */
const pending = new Map<number, (reply: Message) => void>();
let nextId = 1;

readline.createInterface({ input: child.stdout! }).on("line", (line) => {
  let msg: Message;
  try {
    msg = JSON.parse(line) as Message;
  } catch {
    return; // not JSON-RPC: nothing to map back
  }
  if (typeof msg.id !== "number" || msg.method !== undefined) return; // a notification or the child's own request
  const done = pending.get(msg.id);
  pending.delete(msg.id);
  done?.(msg);
});

function toChild(msg: Message): Promise<Message> {
  const id = nextId++;
  return new Promise((resolve) => {
    pending.set(id, resolve);
    child.stdin!.write(JSON.stringify({ ...msg, id }) + "\n");
  });
}

function send(res: http.ServerResponse, status: number, body?: unknown): void {
  if (body === undefined) {
    res.writeHead(status).end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) }).end(text);
}

async function main(): Promise<void> {
  // the child is initialized once; a client's initialize is answered with the child's own reply
  const init = await toChild({
    jsonrpc: "2.0",
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench-relay", version: "1.0.0" } },
  });
  child.stdin!.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");

  const server = http.createServer((req, res) => {
    if (req.method !== "POST") return send(res, 405);
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let msg: Message;
      try {
        msg = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Message;
      } catch {
        return send(res, 400, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
      }
      if (msg.id === undefined || msg.id === null) return send(res, 202); // notifications: nothing to relay
      const callerId = msg.id;
      if (msg.method === "initialize") return send(res, 200, { ...init, id: callerId });
      void toChild(msg).then((reply) => send(res, 200, { ...reply, id: callerId }));
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(Number(portArg), "127.0.0.1");
}

void main();

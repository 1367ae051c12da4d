// The TCP ports a tenant's processes may listen on, when the hub keeps tenants apart on the
// network (hub/tenants/network.ts): the hub names them in AGENTBOX_PORTS (and PORT, their first).
// A program that listens elsewhere fails with its own words for EACCES; the terminal and code
// tools then add a note saying which ports are the tenant's, so the agent can act on it.

export const TENANT_PORTS_ENV = "AGENTBOX_PORTS";

/** "61000-61099" as the tenant's ports, or undefined when they are not confined. */
export function tenantPorts(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const ports = env[TENANT_PORTS_ENV];
  return ports && /^\d+-\d+$/.test(ports) ? ports : undefined;
}

// How programs say a listen or bind was refused: Node's "listen EACCES: permission denied
// 127.0.0.1:3000", Python's "PermissionError: [Errno 13] Permission denied" from bind(), Go's
// "bind: permission denied", curl's "Permission denied" on connect, Rust's "PermissionDenied".
const REFUSED = /EACCES|Errno 13\]|permission denied|PermissionDenied/i;
const ABOUT_SOCKETS = /\b(listen|bind|connect|socket|port|address|server_bind)\b/i;

/** A sentence naming the tenant's ports when `output` reads like a port refused by the confinement. */
export function portNote(output: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const ports = tenantPorts(env);
  if (!ports) return undefined;
  // only the tail: a refusal is where a program stops, and a megabyte of output is not scanned twice
  const tail = output.length > 16_384 ? output.slice(-16_384) : output;
  // Python names the call on one line of its traceback and the refusal on the last
  if (!REFUSED.test(tail) || !ABOUT_SOCKETS.test(tail)) return undefined;
  return (
    `If a listen, bind or connect was refused: this tenant's processes may listen only on TCP ports ${ports} ($PORT is the first, ` +
    `$${TENANT_PORTS_ENV} names them all; port 0 is refused too), and cannot connect to other tenants' ports or the kernel's ephemeral ports. Listen on one of yours.`
  );
}

// Connections to a previewed app, each handed to the proxy only once the port is confirmed to be
// still its owner's (./port-access.ts): a request's bytes (and the preview's cookies in them) never
// reach a socket another tenant opened on the port after the check. Connections are kept alive and
// reused, so the confirming read of the socket tables is paid per connection, not per request: a
// connection stays with the process that accepted it, whoever takes the port later.
import { Agent, type ClientRequestArgs } from "node:http";
import net from "node:net";
import type { Duplex } from "node:stream";

/** The port passed to another user, or its owner's socket closed, between the check and the connection. */
export class PortChangedHands extends Error {
  readonly code = "EPORTCHANGED";
}

/** The hub could not read who listens on the port (its read of the socket tables failed): nothing is sent unconfirmed. */
export class PortUnchecked extends Error {
  readonly code = "EPORTUNCHECKED";
}

/** Resolves once `socket` is connected and `stillOwners()` says the socket it reached is the one checked; else destroys it. */
function confirmed(socket: net.Socket, port: number, stillOwners: () => Promise<boolean>): Promise<void> {
  return new Promise((resolve, reject) => {
    // stays after the hand-over: an error the proxy has not yet listened for ends this exchange, not the hub
    socket.on("error", reject);
    socket.once("connect", () => {
      stillOwners().then(
        (owned) => {
          if (owned) return resolve();
          socket.destroy();
          reject(new PortChangedHands(`nothing of the preview's owner listens on port ${port} now`));
        },
        (err: unknown) => {
          socket.destroy();
          reject(new PortUnchecked(err instanceof Error ? err.message : String(err), { cause: err }));
        },
      );
    });
  });
}

// an idle connection is let go before the app's own keep-alive would end it (Node's servers: 5 s),
// so a request is seldom sent on one the app is closing
const IDLE_MS = 4000;
const IDLE_KEPT = 32;

/** The connections of one preview to the one socket a check chose. */
export class CheckedAgent extends Agent {
  constructor(
    readonly host: string,
    readonly port: number,
    /** The inode of the socket checked. */
    readonly inode: string,
    private readonly stillOwners: () => Promise<boolean>,
  ) {
    super({ keepAlive: true, maxFreeSockets: IDLE_KEPT, timeout: IDLE_MS });
  }

  /** Lets go of the idle connections; those in use end as their exchanges do (each stays with the process that accepted it). */
  retire(): void {
    for (const sockets of Object.values(this.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
  }

  override createConnection(_options: ClientRequestArgs, made?: (err: Error | null, stream: Duplex) => void): undefined {
    const socket = net.connect({ host: this.host, port: this.port });
    confirmed(socket, this.port, this.stillOwners).then(
      () => made?.(null, socket),
      (err: Error) => made?.(err, socket),
    );
    return undefined;
  }
}

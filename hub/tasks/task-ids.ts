// Task ids that name who holds the task: `<replica>.<process>.<uuid>` (`<process>.<uuid>` on a hub
// without AGENTBOX_REPLICA). A router sends tasks/get|update|cancel by the replica before the first
// dot (their Mcp-Name header is the task id: deploy/nginx), as it sends sessions and context
// handles; and a task id this process does not know can be explained in words: it was held by
// another replica, or by this one before it restarted, and its work is lost either way. The uuid
// keeps ids unguessable; the rest is the client's to forge and only chooses which refusal it reads.
import { randomBytes, randomUUID } from "node:crypto";

/** What a task id names: the replica ("" for none), the hub process, then the task's own uuid. */
const HOLDER = /^(?:([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)\.)?([0-9a-f]{16})\.[0-9a-f-]{36}$/;
const START_AGAIN = "Its work is lost: start the call again (the same tools/call), which runs it anew as a new task.";

export class TaskIds {
  private readonly process = randomBytes(8).toString("hex");

  /** @param replica AGENTBOX_REPLICA: the replica the ids this hub mints name. */
  constructor(private readonly replica?: string) {}

  mint(): string {
    return `${this.replica ? `${this.replica}.` : ""}${this.process}.${randomUUID()}`;
  }

  /**
   * Why no task of this id is here, when its id says it was another process's; undefined when
   * it names this very process (or nothing readable), which only "unknown task" explains.
   */
  lostHolder(taskId: unknown): string | undefined {
    const [, replica = "", process] = (typeof taskId === "string" && HOLDER.exec(taskId)) || [];
    if (process === undefined || (replica === (this.replica ?? "") && process === this.process)) return undefined;
    const here = this.replica ? `replica '${this.replica}'` : "this agentbox";
    if (replica !== (this.replica ?? ""))
      return (
        `Task lost: task ${JSON.stringify(taskId)} was held by ${replica ? `replica '${replica}'` : "an agentbox without a replica name"}, ` +
        `but this request reached ${here}: a task lives only in the replica that started it, and that one is unreachable here ` +
        `(the router sends a task's requests by its id; it reached the wrong replica or its own is gone). ${START_AGAIN}`
      );
    return `Task lost: task ${JSON.stringify(taskId)} was held by ${here} before it restarted, and was lost with the restart. ${START_AGAIN}`;
  }
}

// The protocol extensions the hub serves, by the names clients and servers declare them under
// (capabilities.extensions): shared by the room that advertises them (sessions) and the room that
// implements them (tasks), neither of which may import the other's way round.

/** The tasks extension (SEP-2663): a tools/call answered with a task the client polls. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** The skills extension (SEP-2640): skills/list and skills/get, each skill's files read as resources. */
export const SKILLS_EXTENSION = "io.modelcontextprotocol/skills";

// A loop over something another party sizes (a folder's entries, the process table, a kernel
// table, a child's queued work) yields between slices, so the calls of other tenants get their turn.

/** Let the event loop take a turn: what runs next is whatever was waiting, then the rest of this loop. */
export const nextTurn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

// Files the hub writes for a tenant's servers to read (its disk use, a memory relief): in the
// tenant's state folder, readable by the tenant and writable only by the hub, replaced whole so a
// reader never sees one half written.
import fs from "node:fs";
import path from "node:path";

export function publishForTenant(file: string, value: unknown): void {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.tmp`);
  fs.writeFileSync(temp, JSON.stringify(value), { mode: 0o644 });
  fs.chmodSync(temp, 0o644); // the hub's umask is 077 under per-tenant uids
  fs.renameSync(temp, file);
}

// A call's arguments as the audit trail keeps them when the operator asks (AGENTBOX_AUDIT_ARGUMENTS=1):
// values under names that look secret are redacted at any depth, and the copy is bounded in size and
// depth whatever the agent sent, so one call cannot bloat the trail or cost the hub a walk of its whole input.

/** A field name that may hold a credential: its value is never written. */
const SECRET_NAME = /pass(word|phrase)?|secret|token|api[-_]?key|auth|credential|cookie|bearer|private[-_]?key|signature|session/i;
/** Characters of argument text one record keeps at most (strings and names together). */
const BUDGET_CHARS = 4096;
const MAX_DEPTH = 8;
const REDACTED = "[redacted]";
const CUT = "…";

export function auditedArguments(args: unknown): unknown {
  const budget = { left: BUDGET_CHARS };
  return copy(args, budget, 0);
}

function copy(value: unknown, budget: { left: number }, depth: number): unknown {
  if (budget.left <= 0) return CUT;
  if (typeof value === "string") {
    const kept = value.length > budget.left ? `${value.slice(0, budget.left)}${CUT}` : value;
    budget.left -= kept.length;
    return kept;
  }
  if (value === null || typeof value !== "object") {
    budget.left -= 8;
    return typeof value === "number" || typeof value === "boolean" ? value : null;
  }
  if (depth >= MAX_DEPTH) return CUT;
  // an empty object or array costs its brackets: a million of them cannot pass for free
  budget.left -= 2;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      if (budget.left <= 0) {
        out.push(CUT);
        break;
      }
      out.push(copy(item, budget, depth + 1));
    }
    return out;
  }
  // no prototype: a key such as "__proto__" is then just a key
  const out: Record<string, unknown> = Object.create(null);
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (budget.left <= 0) {
      out[CUT] = CUT;
      break;
    }
    const name = key.length > 64 ? `${key.slice(0, 64)}${CUT}` : key;
    budget.left -= name.length;
    out[name] = SECRET_NAME.test(key) ? REDACTED : copy((value as Record<string, unknown>)[key], budget, depth + 1);
  }
  return out;
}

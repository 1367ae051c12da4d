// A call's arguments as the audit trail keeps them when the operator asks (AGENTBOX_AUDIT_ARGUMENTS=1):
// a credential the hub minted is redacted wherever it stands, by what it is (./minted-secrets.ts: a
// preview URL in a `url`, a context handle in a `text`), values under names that look secret (a
// password the agent types) at any depth, and the copy is bounded in size and depth whatever the
// agent sent, so one call cannot bloat the trail or cost the hub a walk of its whole input.
import { KEY_CHARS, REDACTED } from "./minted-secrets.js";

/** What redacts the hub's own credentials in a text (MintedSecrets.redact). */
export type Redact = (text: string) => string;

/** A field name that may hold a credential: its value is never written. */
const SECRET_NAME = /pass(word|phrase)?|secret|token|api[-_]?key|auth|credential|cookie|bearer|private[-_]?key|signature|session/i;
/** Characters of argument text one record keeps at most (strings and names together). */
const BUDGET_CHARS = 4096;
const MAX_DEPTH = 8;
const CUT = "…";

export function auditedArguments(args: unknown, redact: Redact): unknown {
  const budget = { left: BUDGET_CHARS, redact };
  return copy(args, budget, 0);
}

interface Budget {
  left: number;
  redact: Redact;
}

/** At most `budget.left` characters of `text`, with the hub's credentials redacted (one cut by the bound too: it is searched past the cut). */
function kept(text: string, budget: Budget): string {
  const searched = budget.redact(text.length > budget.left + KEY_CHARS ? text.slice(0, budget.left + KEY_CHARS) : text);
  const shown = searched.length > budget.left ? `${searched.slice(0, budget.left)}${CUT}` : searched;
  // and its quotes: a hundred thousand empty strings cannot pass for free
  budget.left -= shown.length + 2;
  return shown;
}

function copy(value: unknown, budget: Budget, depth: number): unknown {
  if (budget.left <= 0) return CUT;
  if (typeof value === "string") return kept(value, budget);
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
    const shown = budget.redact(key.length > 64 + KEY_CHARS ? key.slice(0, 64 + KEY_CHARS) : key);
    const name = shown.length > 64 ? `${shown.slice(0, 64)}${CUT}` : shown;
    budget.left -= name.length;
    out[name] = SECRET_NAME.test(key) ? REDACTED : copy((value as Record<string, unknown>)[key], budget, depth + 1);
  }
  return out;
}

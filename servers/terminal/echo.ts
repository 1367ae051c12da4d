// A terminal echoes what is typed into it: `echo hi` + Enter comes back as "echo hi\r\n" before
// the command prints "hi". A wait for "hi" must not be satisfied by that echo, so the wait looks
// for the echo of the sent text first and matches the pattern only after it.

// An escape sequence (CSI, OSC, or a two-byte one) at the current position, as readline writes
// them while redrawing the line; they are not part of the echoed text.
const ESCAPE = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])/y;
/** Only this much of the first output line is searched for the echo (a prompt may come first). */
const HEAD_LIMIT = 4096;

/**
 * Where the echo of `typed` ends in `output` (raw terminal output since the input was sent), as
 * an index into `output`: 0 when the output does not show it, undefined while the output ends in
 * the middle of it (wait for more before matching anything). The echo must begin on the first
 * output line (after a prompt, perhaps). When a later input line is interleaved with output (a
 * REPL's continuation prompt), only the echo of the lines before it is skipped. Call it again as
 * output arrives: a prompt printed after the input was sent can come before the echo.
 */
export function echoEnd(output: string, typed: string): number | undefined {
  const expected = typed.replace(/\r\n?/g, "\n");
  if (expected.replace(/\n/g, "") === "") return 0;
  const newline = output.indexOf("\n");
  const head = Math.min(newline < 0 ? output.length : newline, HEAD_LIMIT);
  let pending = false;
  for (let start = 0; start <= head; start++) {
    const walk = walkEcho(output, start, expected);
    if (walk === "pending") pending = true;
    else if (walk !== "mismatch") return walk;
  }
  return pending ? undefined : 0;
}

/** Follow the expected echo from `start`, skipping escape sequences and carriage returns. */
function walkEcho(output: string, start: number, expected: string): number | "pending" | "mismatch" {
  let i = start;
  let j = 0;
  let lineEnd = -1; // output index after the last fully echoed input line
  while (j < expected.length) {
    if (i >= output.length) return j > 0 ? "pending" : "mismatch";
    ESCAPE.lastIndex = i;
    if (output[i] === "\x1b" && ESCAPE.test(output)) {
      i = ESCAPE.lastIndex;
      continue;
    }
    if (output[i] === "\r" && expected[j] !== "\r") {
      i++;
      continue;
    }
    if (output[i] !== expected[j]) return lineEnd >= 0 ? lineEnd : "mismatch";
    i++;
    j++;
    if (expected[j - 1] === "\n") lineEnd = i;
  }
  return i;
}

/** Past the first line and the echo's length the echo is decided: stop re-reading from the start. */
export function echoDecided(output: string, typed: string): boolean {
  return output.length > HEAD_LIMIT + 2 * typed.length;
}

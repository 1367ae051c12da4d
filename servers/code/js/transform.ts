// Turn a JavaScript cell into something a notebook can run again and again in one vm context:
//
// - top-level `await` works: the cell runs inside an async function;
// - top-level declarations (var/let/const/function/class/import) outlive the cell: they become
//   assignments to the context's globals, so a later cell sees them and re-running a cell that
//   declares `const x` does not fail with "already declared";
// - a trailing expression statement is returned, so its value can be shown like a REPL does.
//
// Replacements keep the line count of the original, so line numbers in stack traces match.
import * as acorn from "acorn";

type Node = acorn.AnyNode;

interface Edit {
  start: number;
  end: number;
  text: string;
}

/** The key under which the wrapper returns the last expression's value. */
export const DISPLAY_KEY = "__agentboxDisplay";

const PARSE_OPTIONS = { ecmaVersion: "latest", allowAwaitOutsideFunction: true, locations: false } as const;

function parse(code: string): acorn.Program {
  try {
    return acorn.parse(code, { ...PARSE_OPTIONS, sourceType: "script" });
  } catch (scriptError) {
    // `import x from "y"` only parses as a module; anything else reports the script error
    try {
      return acorn.parse(code, { ...PARSE_OPTIONS, sourceType: "module" });
    } catch {
      throw scriptError;
    }
  }
}

/** Keep the number of lines: pad the replacement with the newlines it lost. */
function sameLines(original: string, replacement: string): string {
  const lost = count(original, "\n") - count(replacement, "\n");
  return lost > 0 ? replacement + "\n".repeat(lost) : replacement;
}

function count(text: string, char: string): number {
  let n = 0;
  for (const c of text) if (c === char) n++;
  return n;
}

function declarationToAssignments(code: string, node: acorn.VariableDeclaration): string {
  const parts = node.declarations.map((d) => {
    const target = code.slice(d.id.start, d.id.end);
    if (d.init) {
      const value = code.slice(d.init.start, d.init.end);
      // an object pattern must be parenthesised to be read as an assignment target
      return d.id.type === "ObjectPattern" ? `(${target} = ${value})` : `${target} = ${value}`;
    }
    // `var x;` must not reset an existing x; `let x;` starts undefined
    return node.kind === "var" ? `if (typeof ${target} === "undefined") ${target} = undefined` : `${target} = undefined`;
  });
  return parts.join("; ") + ";";
}

function importToAssignments(node: acorn.ImportDeclaration, index: number): string {
  const module = `__agentboxImport${index}`;
  const source = JSON.stringify(node.source.value);
  const lines = [`const ${module} = await import(${source});`];
  for (const spec of node.specifiers) {
    if (spec.type === "ImportDefaultSpecifier") lines.push(`${spec.local.name} = ${module}.default;`);
    else if (spec.type === "ImportNamespaceSpecifier") lines.push(`${spec.local.name} = ${module};`);
    else {
      const imported = spec.imported.type === "Identifier" ? spec.imported.name : String(spec.imported.value);
      lines.push(`${spec.local.name} = ${module}[${JSON.stringify(imported)}];`);
    }
  }
  return lines.join(" ");
}

function edits(code: string, program: acorn.Program): { edits: Edit[]; functions: string[] } {
  const result: Edit[] = [];
  const functions: string[] = [];
  program.body.forEach((node: Node, i) => {
    const last = i === program.body.length - 1;
    const original = code.slice(node.start, node.end);
    switch (node.type) {
      case "VariableDeclaration":
        result.push({ start: node.start, end: node.end, text: sameLines(original, declarationToAssignments(code, node)) });
        break;
      case "FunctionDeclaration":
        // hoisted inside the wrapper; published to the globals before anything else runs
        if (node.id) functions.push(node.id.name);
        break;
      case "ClassDeclaration":
        if (node.id) {
          result.push({ start: node.start, end: node.start, text: `${node.id.name} = ` });
          result.push({ start: node.end, end: node.end, text: ";" });
        }
        break;
      case "ImportDeclaration":
        result.push({ start: node.start, end: node.end, text: sameLines(original, importToAssignments(node, i)) });
        break;
      case "ExportNamedDeclaration":
      case "ExportDefaultDeclaration":
      case "ExportAllDeclaration":
        throw new SyntaxError("`export` has no meaning in a notebook cell; declare the value without it.");
      case "ExpressionStatement":
        if (last) {
          const expression = code.slice(node.expression.start, node.expression.end);
          result.push({ start: node.start, end: node.end, text: sameLines(original, `return { ${DISPLAY_KEY}: (${expression}) };`) });
        }
        break;
      default:
        break;
    }
  });
  return { edits: result, functions };
}

/** vm.Script lineOffset for a transformed cell, so line 1 is the user's first line. */
export const CELL_LINE_OFFSET = -1;

/** The source to run with vm: an async arrow function called at once, evaluating to a Promise. */
export function transformCell(code: string): string {
  const program = parse(code);
  const { edits: list, functions } = edits(code, program);
  let out = "";
  let at = 0;
  for (const edit of list.sort((a, b) => a.start - b.start)) {
    out += code.slice(at, edit.start) + edit.text;
    at = edit.end;
  }
  out += code.slice(at);
  const publish = functions.map((name) => `globalThis[${JSON.stringify(name)}] = ${name};`).join(" ");
  // the prelude has a line of its own: run with lineOffset -1 (CELL_LINE_OFFSET) the user's
  // lines and columns are reported as written
  return `(async () => { ${publish}\n${out}\n})()`;
}

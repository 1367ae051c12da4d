// The code gate (`npm run lint`, part of `npm test`): ESLint's and typescript-eslint's recommended
// rules on every source file, with type information, so that a promise nobody awaits or catches is
// an error. The architecture (rooms, no import circle) is checked by dependency-cruiser
// (.dependency-cruiser.cjs) and the formatting by Prettier (.prettierrc.json).
//
// The playground's browser code (hub/playground/web) is TypeScript checked by tsc like the rest,
// its browser globals from tsconfig.json's DOM library; esbuild bundles it for the browser.
// The plain-JavaScript scripts (scripts/, docker/, deploy/, bench/*.mjs) run on Node before
// anything is compiled: their types come from tsconfig.scripts.json, their globals from the list below.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

// What Node gives a script without an import, and CommonJS's own names for .cjs
const nodeGlobals = Object.fromEntries(
  [
    "AbortController",
    "AbortSignal",
    "Blob",
    "Buffer",
    "clearImmediate",
    "clearInterval",
    "clearTimeout",
    "console",
    "crypto",
    "Event",
    "EventTarget",
    "fetch",
    "FormData",
    "global",
    "Headers",
    "performance",
    "process",
    "queueMicrotask",
    "ReadableStream",
    "Request",
    "Response",
    "setImmediate",
    "setInterval",
    "setTimeout",
    "structuredClone",
    "TextDecoder",
    "TextEncoder",
    "URL",
    "URLSearchParams",
  ].map((name) => [name, "readonly"]),
);
const commonJsGlobals = Object.fromEntries(["module", "require", "exports", "__dirname", "__filename"].map((name) => [name, "readonly"]));

// A promise is awaited, or detached on purpose (`void`, with a catch where it can reject): an
// unhandled rejection ends the hub. node:test's test() and describe() return promises its runner awaits.
const promiseRules = {
  "@typescript-eslint/no-floating-promises": [
    "error",
    { allowForKnownSafeCalls: [{ from: "package", package: "node:test", name: ["test", "it", "describe", "suite"] }] },
  ],
  "@typescript-eslint/no-misused-promises": "error",
};

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "workspace/**", "bench/results/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // `_name` marks a parameter or binding kept for its position
      // terminal output is matched for escape sequences on purpose
      "no-control-regex": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
    },
  },
  {
    files: ["**/*.ts"],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      ...promiseRules,
      // an import only types use says so: a reader, and a compiler that sees one file at a time (esbuild), knows it loads nothing
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
    },
  },
  {
    files: ["**/*.js", "**/*.mjs", "**/*.cjs"],
    languageOptions: {
      globals: nodeGlobals,
      parserOptions: { project: "./tsconfig.scripts.json", tsconfigRootDir: import.meta.dirname },
    },
    rules: promiseRules,
  },
  {
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs", globals: commonJsGlobals },
  },
  {
    // docs/development.md's rule: the hub's edges are typed, the two MCP SDKs meeting in hub/protocol/sdk-seam.ts (`as any` is no-explicit-any's)
    files: ["hub/**/*.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: "TSAsExpression > TSNeverKeyword.typeAnnotation",
          message: "`as never` silences a type mismatch: convert the value (hub/protocol/sdk-seam.ts for SDK types).",
        },
        {
          selector: "TSAsExpression > TSAsExpression.expression > TSUnknownKeyword.typeAnnotation",
          message: "`as unknown as` silences a type mismatch: convert or check the value instead.",
        },
        {
          selector: "TSTypeAliasDeclaration > TSNeverKeyword.typeAnnotation",
          message: "A type alias of never is a cast in disguise: convert the value instead.",
        },
      ],
    },
  },
  {
    files: ["test/**/*.ts", "bench/**/*.ts"],
    rules: {
      // tests read structured results loosely and assert on their shape themselves
      "@typescript-eslint/no-explicit-any": "off",
      // indentation in expected text is matched literally
      "no-regex-spaces": "off",
    },
  },
);

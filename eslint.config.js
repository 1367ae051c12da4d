// The code gate (`npm run lint`, part of `npm test`): ESLint's and typescript-eslint's recommended
// rules. The architecture (rooms, no import circle) is checked by dependency-cruiser
// (.dependency-cruiser.cjs) and the formatting by Prettier (.prettierrc.json).
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "hub/playground/web/**", "workspace/**", "**/*.js", "**/*.mjs", "**/*.cjs"] },
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
    // the README's rule: the hub's edges are typed, the two MCP SDKs meeting in hub/protocol/sdk-seam.ts (`as any` is no-explicit-any's)
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

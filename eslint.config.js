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
    files: ["test/**/*.ts", "bench/**/*.ts"],
    rules: {
      // tests read structured results loosely and assert on their shape themselves
      "@typescript-eslint/no-explicit-any": "off",
      // indentation in expected text is matched literally
      "no-regex-spaces": "off",
    },
  },
);

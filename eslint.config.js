// ESLint (flat config): the type-aware promise rules are the point. A promise nobody awaits loses its error
// (an unhandled rejection ends the process) and its ordering; a promise passed where a callback's result is
// ignored (an Express handler, an EventEmitter listener) does the same silently.
//
// TypeScript runs side by side in two versions. `tsc` (npm run typecheck, the build) is TypeScript 7, the native
// compiler, installed under the alias `@typescript/native` (npm:typescript@7). TypeScript 7 ships no JavaScript
// compiler API, which typescript-eslint's type-aware rules need (its supported range is >=4.8.4 <6.1.0), so the
// package name `typescript` resolves to `@typescript/typescript6` (the 6.0 compiler API; its binary is `tsc6`,
// so the two do not collide). Once typescript-eslint reads types from TypeScript 7, drop the alias.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'clients/*/node_modules/**', 'drizzle/**'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      // `_`-prefixed names are the ones left out on purpose (a destructured field dropped, Express's fourth argument).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // `let [row, found] = …` where only `row` is reassigned later stays one statement.
      'prefer-const': ['error', { destructuring: 'all' }],
    },
  },
  {
    // Tests read JSON bodies as `any`: their shape is checked against the published OpenAPI document at run time.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);

// ESLint flat config: typescript-eslint recommended, import cycles forbidden, layering enforced.
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import moduleBarrels from './scripts/eslint/module-barrels.mjs';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'tests/support/graphql/generated.ts', 'admin-ui/**', 'coverage/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { 'import-x': importX, muninn: { rules: { 'module-barrels': moduleBarrels } } },
    settings: { 'import-x/resolver': { node: { extensions: ['.ts', '.js'] } } },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-unsafe-function-type': 'off',
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    // Module surfaces: other code reaches a module only through its index.ts (unit tests may look inside).
    files: ['server/**/*.ts', 'jobs/**/*.ts', 'scripts/**/*.ts'],
    rules: { 'muninn/module-barrels': 'error' },
  },
  {
    // Layering (DESIGN §9): server/ never imports jobs/, except the composition root and the CLI.
    files: ['server/**/*.ts'],
    ignores: ['server/app.ts', 'server/composition/**', 'server/cli/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/jobs/**', '**/jobs'], message: 'Only the composition root imports jobs/; declare a port next to the service instead.' }] }],
    },
  },
  {
    files: ['server/modules/**/*.ts', 'server/persistence/**/*.ts', 'server/common/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/graphql/**', '**/channels/**', '**/http/**', '**/jobs/**'], message: 'modules → persistence only; graphql and channels depend on modules, not the other way.' }] }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);

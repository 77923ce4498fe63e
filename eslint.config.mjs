// ESLint flat config for the extension's TypeScript (the Python side uses ruff).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'bundled/**', 'node_modules/**', '.cache/**', '.venv/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    files: ['extension/**/*.ts', 'benchmarks/**/*.ts'],
    languageOptions: { parserOptions: { project: ['./tsconfig.test.json'], tsconfigRootDir: import.meta.dirname } },
    rules: {
      // Only vscodeApi.ts may use the vscode API at run time; everything else gets it injected (testable).
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { paths: [{ name: 'vscode', message: 'use the VsCode wrapper from vscodeApi.ts', allowTypeImports: true }] },
      ],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      eqeqeq: 'error',
    },
  },
  {
    // node:test's describe/it return promises the runner itself awaits.
    files: ['extension/test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', name: ['describe', 'it', 'test', 'before', 'after'], package: 'node:test' },
          ],
        },
      ],
    },
  },
  {
    files: ['extension/src/vscodeApi.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': 'off' },
  },
  {
    files: ['extension/scripts/**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);

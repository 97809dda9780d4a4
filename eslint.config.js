// ESLint with typescript-eslint's recommended rules, type-aware where it finds real bugs
// (floating promises, misused promises).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'src/generated/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      // Node 20 drops an AbortSignal.timeout inside AbortSignal.any at a garbage collection: the
      // deadline never fires (see timeoutSignal in src/abortable.ts).
      'no-restricted-properties': ['error', { object: 'AbortSignal', property: 'timeout', message: 'Use timeoutSignal from src/abortable.ts (Node 20 can drop a timeout signal inside AbortSignal.any).' }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { parserOptions: { projectService: false, project: null }, globals: { process: 'readonly', Buffer: 'readonly', URL: 'readonly' } },
  },
);

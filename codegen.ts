import type { CodegenConfig } from '@graphql-codegen/cli';

// Types and pre-parsed documents for the fixed operations the REST routes run (src/http/operations).
// `npm run codegen` writes them; `npm run codegen:check` (in CI) fails when they are stale.
const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: 'src/http/operations/*.graphql',
  generates: {
    'src/generated/operations.ts': {
      plugins: ['typescript-operations', 'typed-document-node'],
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        avoidOptionals: true,
        scalars: {
          // The fixed operations keep stored event JSON as bytes (src/http/fixed-operation.ts).
          String: { input: 'string', output: '../store/json-text.js#StringOutput' },
          Timestamp: { input: 'number', output: 'number' },
        },
      },
    },
  },
};

export default config;

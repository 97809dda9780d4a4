import { serverAudits } from 'graphql-http';
import { describe, expect, it } from 'vitest';
import { useTestServer } from './support/test-server.js';

const context = useTestServer();

describe('GraphQL over HTTP conformance (graphql-http audit)', () => {
  it('passes every MUST', async () => {
    const audits = serverAudits({ url: () => `${context.server.url}/graphql` });
    const musts = audits.filter((audit) => audit.name.startsWith('MUST'));
    expect(musts.length).toBeGreaterThan(10);
    const failures: string[] = [];
    for (const audit of musts) {
      const result = await audit.fn();
      if (result.status !== 'ok') failures.push(`${audit.name}: ${result.reason}`);
    }
    expect(failures).toEqual([]);
  });
});

import { serverAudits } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './support/test-server.js';
import { createTestStore, type TestStore } from './support/test-store.js';

let testStore: TestStore;
let server: TestServer;
beforeAll(async () => {
  testStore = await createTestStore();
  server = await startTestServer(testStore.store);
});
afterAll(async () => {
  await server.close();
  await testStore.cleanup();
});

describe('GraphQL over HTTP conformance (graphql-http audit)', () => {
  it('passes every MUST', async () => {
    const audits = serverAudits({ url: () => `${server.url}/graphql` });
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

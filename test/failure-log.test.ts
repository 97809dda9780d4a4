import { describe, expect, it } from 'vitest';
import { ERRORS, LookupError } from '../src/errors.js';
import { createFailureLog } from '../src/http/failure-log.js';
import { StoreUnavailableError } from '../src/store/event-store.js';
import { profile } from './support/events.js';
import { getJson, startTestServer } from './support/test-server.js';
import { createTestStore } from './support/test-store.js';

const alice = profile('failure-alice', { name: 'alice' });

describe('server failures are logged with their cause, but not once per request (a store outage must not flood the log)', () => {
  it('while the store is down, "lookup failed" is written at most once a second per code, saying how many were left out', async () => {
    const store = await createTestStore();
    await store.store.putEvents([alice]);
    const server = await startTestServer(store.store);
    try {
      await store.store.close(); // every lookup now fails with store_unavailable
      const first = await Promise.all(
        Array.from({ length: 40 }, () => getJson(`${server.url}/user-profile?pubkey=${alice.pubkey}`)),
      );
      expect(first.every((response) => response.status === 500)).toBe(true);
      const failed = () =>
        server.logs
          .join('')
          .split('\n')
          .filter((line) => line.includes('"msg":"lookup failed"'))
          .map((line) => JSON.parse(line) as { level: string; code: string; suppressed?: number; store?: string; err?: { message: string } });
      expect(failed()).toHaveLength(1);
      // A known store state in words, without the client's message and stack.
      expect(failed()[0]).toMatchObject({ level: 'error', code: 'store_unavailable', store: 'not connected' });
      expect(failed()[0]?.err).toBeUndefined();
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect((await getJson(`${server.url}/user-profile?pubkey=${alice.pubkey}`)).status).toBe(500);
      expect(failed()).toHaveLength(2);
      expect(failed()[1]).toMatchObject({ code: 'store_unavailable', suppressed: 39 });
    } finally {
      await server.close();
      await store.cleanup();
    }
  });
});

describe('a table error with no cause behind it is logged in words, not as a stack', () => {
  it('relays_unavailable (no relay answered): the message says what happened; no err, no stack', () => {
    const lines: { fields: object; message: string }[] = [];
    const log = createFailureLog();
    log({ error: (fields, message) => lines.push({ fields, message }) }, new LookupError('relays_unavailable'), 'lookup failed');
    expect(lines).toEqual([{ fields: { code: 'relays_unavailable' }, message: `lookup failed: ${ERRORS.relays_unavailable.message}` }]);
    const withCause = new LookupError('store_unavailable', { cause: new Error('Connection is closed.') });
    createFailureLog()({ error: (fields, message) => lines.push({ fields, message }) }, withCause, 'lookup failed');
    expect(lines[1]).toMatchObject({ fields: { code: 'store_unavailable', err: { message: 'Connection is closed.' } }, message: 'lookup failed' });
  });

  it('a store unavailable for a known reason is said in words; for any other reason, with its cause and stack', () => {
    const lines: { fields: object; message: string }[] = [];
    const sink = { error: (fields: object, message: string) => lines.push({ fields, message }) };
    const unavailable = (cause: Error) => new LookupError('store_unavailable', { cause: new StoreUnavailableError({ cause }) });
    createFailureLog()(sink, unavailable(new Error("Stream isn't writeable and enableOfflineQueue options is false")), 'lookup failed');
    createFailureLog()(sink, unavailable(new Error('Command timed out')), 'lookup failed');
    const strange = new Error('EIO: i/o error');
    createFailureLog()(sink, unavailable(strange), 'lookup failed');
    expect(lines).toEqual([
      { fields: { code: 'store_unavailable', store: 'not connected' }, message: 'lookup failed' },
      { fields: { code: 'store_unavailable', store: 'timed out' }, message: 'lookup failed' },
      { fields: { code: 'store_unavailable', err: strange }, message: 'lookup failed' },
    ]);
  });
});

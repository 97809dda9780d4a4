import { spawnCli } from './support/cli.js';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ImportSummary, importEvents } from '../src/import/import-events.js';
import { type InputItem, readEventInput, readLines } from '../src/import/read-event-input.js';
import { serializeEvent } from '../src/nostr/event.js';
import { type EventStore, StoreUnavailableError } from '../src/store/event-store.js';
import { profile, realEvents, signed } from './support/events.js';
import { createTestStore, type TestStore, storeEnv } from './support/test-store.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 30);

const tamperedText = readFileSync(new URL('./fixtures/tampered-event.json', import.meta.url), 'utf8');
const a = signed('alice', { content: 'a' });
const b = signed('bob', { content: 'b' });
const c = signed('carol', { content: 'c' });

/** An item read, without `bytes` (asserted on its own below). */
type Read = { type: 'candidate'; value: unknown; line: number } | Exclude<InputItem, { type: 'candidate' }>;

async function collect(text: string): Promise<Read[]> {
  const items: Read[] = [];
  for await (const item of readEventInput(Readable.from([text]))) {
    if (item.type !== 'candidate') items.push(item);
    else items.push({ type: item.type, value: item.value, line: item.line });
  }
  return items;
}

describe('import input formats', () => {
  it('each candidate carries the size of the text it was read from (a document shares its own out), for the import\'s memory bounds', async () => {
    const sizes = async (text: string) => {
      const found: number[] = [];
      for await (const item of readEventInput(Readable.from([text]))) if (item.type === 'candidate') found.push(item.bytes);
      return found;
    };
    expect(await sizes(`${serializeEvent(a)}\n  ${serializeEvent(b)}  \n`)).toEqual([serializeEvent(a).length, serializeEvent(b).length]);
    const array = JSON.stringify([a, b]);
    expect(await sizes(array)).toEqual([Math.ceil(array.length / 2), Math.ceil(array.length / 2)]);
  });

  it('JSON Lines of events, blank lines and CRLF tolerated', async () => {
    const items = await collect(`${serializeEvent(a)}\r\n\r\n${serializeEvent(b)}\n`);
    expect(items).toEqual([
      { type: 'candidate', value: a, line: 1 },
      { type: 'candidate', value: b, line: 3 },
    ]);
  });

  it('JSON Lines of relay messages: both EVENT forms; EOSE, NOTICE and OK are ignored', async () => {
    const text = [
      JSON.stringify(['EVENT', 'sub1', a]),
      JSON.stringify(['EOSE', 'sub1']),
      JSON.stringify(['EVENT', b]),
      JSON.stringify(['NOTICE', 'hello']),
      JSON.stringify(['OK', a.id, true, '']),
    ].join('\n');
    expect(await collect(text)).toEqual([
      { type: 'candidate', value: a, line: 1 },
      { type: 'ignored', line: 2 },
      { type: 'candidate', value: b, line: 3 },
      { type: 'ignored', line: 4 },
      { type: 'ignored', line: 5 },
    ]);
  });

  it('one JSON array of events, on one line or pretty-printed', async () => {
    const values = (items: Read[]) =>
      items.map((item) => (item.type === 'candidate' ? item.value : item.type));
    expect(values(await collect(JSON.stringify([a, b, c])))).toEqual([a, b, c]);
    expect(values(await collect(JSON.stringify([a, b, c], null, 2)))).toEqual([a, b, c]);
  });

  it('one pretty-printed event (like tampered-event.json)', async () => {
    const items = await collect(tamperedText);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ type: 'candidate', line: 1 });
  });

  it('a bad line costs only itself, even the first one', async () => {
    const text = [
      '{"id": truncated',
      serializeEvent(a),
      'not json at all',
      '',
      serializeEvent(b),
      '{{{',
    ].join('\n');
    expect(await collect(text)).toEqual([
      { type: 'unreadable', line: 1 },
      { type: 'candidate', value: a, line: 2 },
      { type: 'unreadable', line: 3 },
      { type: 'candidate', value: b, line: 5 },
      { type: 'unreadable', line: 6 },
    ]);
  });

  it('deferObjectLines: a line after the first that looks like one object is handed on unparsed, as its bytes (blanks at either end left out); the first line and arrays are parsed', async () => {
    const items: InputItem[] = [];
    const lines = [serializeEvent(a), ` ${serializeEvent(b)}\t`, '{"id": truncated}', JSON.stringify(['EVENT', c]), '{{{', '{"kind":1}', '\u00a0{"kind":2}', '{"content":"é"}'];
    for await (const item of readEventInput(Readable.from([lines.join('\n')]), { deferObjectLines: true })) items.push(item);
    const bytes = (text: string) => Buffer.from(text);
    expect(items).toEqual([
      { type: 'candidate', value: a, line: 1, bytes: serializeEvent(a).length, text: serializeEvent(a) },
      { type: 'object-line', wire: bytes(serializeEvent(b)), line: 2, bytes: serializeEvent(b).length },
      { type: 'object-line', wire: bytes('{"id": truncated}'), line: 3, bytes: 17 },
      { type: 'candidate', value: c, line: 4, bytes: JSON.stringify(['EVENT', c]).length },
      { type: 'unreadable', line: 5 },
      { type: 'object-line', wire: bytes('{"kind":1}'), line: 6, bytes: 10 },
      // A blank String.prototype.trim removes but that is not ASCII: read as text, on this thread.
      { type: 'candidate', value: { kind: 2 }, line: 7, bytes: 10, text: '{"kind":2}' },
      { type: 'object-line', wire: bytes('{"content":"é"}'), line: 8, bytes: 16 },
    ]);
  });

  it('readLines breaks lines as node:readline does (LF, CRLF, a lone CR; chunks cut anywhere, inside a character, empty ones; bytes that are not UTF-8, an unfinished character at the end), each line its bytes (property)', async () => {
    const text = fc.array(fc.constantFrom('a', '{', '}', ' ', '\r', '\n', '\r\n', 'é', '😀', '\u2028'), { maxLength: 60 }).map((parts) => parts.join(''));
    // `whole` cut at the given points (modulo its length; repeated points make empty chunks).
    const piecesOf = <T extends string | Buffer>(whole: T, cuts: number[]): T[] => {
      const points = [...cuts.map((cut) => cut % (whole.length + 1)), whole.length].sort((x, y) => x - y);
      let at = 0;
      return points.map((point) => {
        const piece = whole.slice(at, point) as T;
        at = point;
        return piece;
      });
    };
    const read = async (chunks: (Buffer | string)[]) => {
      const ours: string[] = [];
      for await (const line of readLines(Readable.from(chunks))) ours.push(line.toString('utf8'));
      const theirs: string[] = [];
      for await (const line of createInterface({ input: Readable.from(chunks), crlfDelay: Number.POSITIVE_INFINITY })) theirs.push(line);
      expect(ours).toEqual(theirs);
    };
    await fc.assert(
      fc.asyncProperty(text, fc.array(fc.nat(200), { maxLength: 6 }), fc.constantFrom([], [0xff], [0xe2, 0x82], [0xf0], [0xf0, 0x9f, 0x98], [0xc3]), fc.boolean(), async (drawn, cuts, tail, asStrings) => {
        // Strings as a Readable of strings hands them, cut anywhere (between a surrogate pair's
        // halves too); or bytes, cut anywhere.
        await read(asStrings ? piecesOf(drawn, cuts) : piecesOf(Buffer.concat([Buffer.from(drawn), Buffer.from(tail)]), cuts));
      }),
      { numRuns: RUNS * 20 },
    );
  });

  it('readLines: a million lone CRs cost linear time, not the square of a chunk', async () => {
    const started = performance.now();
    let lines = 0;
    for await (const line of readLines(Readable.from([Buffer.alloc(1_000_000, 0x0d)]))) lines += line.length === 0 ? 1 : 0;
    expect(lines).toBe(1_000_000);
    // Linear: well under a second (searching the chunk's rest per line took minutes).
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('never throws, whatever the bytes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.string({ unit: 'binary' }), fc.json()), { maxLength: 8 }),
        async (lines) => {
          const items = await collect(lines.join('\n'));
          for (const item of items) expect(['candidate', 'unreadable', 'ignored']).toContain(item.type);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('importEvents against Redis', () => {
  let testStore: TestStore;
  beforeAll(async () => {
    testStore = await createTestStore();
  });
  afterAll(async () => {
    await testStore.cleanup();
  });

  it('verifies everything, stores only valid events, and counts every outcome', async () => {
    const forged = { ...signed('mallory', { content: 'x' }), sig: b.sig };
    const oldProfile = profile('dave', { v: 1 }, 100);
    const newProfile = profile('dave', { v: 2 }, 200);
    const ephemeral = signed('eve', { kind: 20001 });
    const text = [
      serializeEvent(a),
      JSON.stringify(['EVENT', 's', b]),
      JSON.stringify(['EOSE', 's']),
      serializeEvent(a),
      JSON.stringify(forged),
      tamperedText.replace(/\n\s*/g, ''),
      JSON.stringify({ ...c, id: 'nope' }),
      serializeEvent(newProfile),
      serializeEvent(oldProfile),
      serializeEvent(ephemeral),
      '42',
      'garbage',
    ].join('\n');
    const summary = await importEvents(Readable.from([text]), testStore.store, { batchSize: 2 });
    expect(summary).toEqual<ImportSummary>({
      read: 10,
      stored: 3,
      replaced: 0,
      superseded: 1,
      duplicate: 1,
      rejected: 0,
      ephemeral: 1,
      applied: 0,
      deleted: 0,
      invalid: { bad_signature: 1, bad_id: 1, 'bad_field:id': 1, not_an_object: 1 },
      unreadableLines: 1,
      unreadableExamples: [12],
      ignoredMessages: 1,
    });
    const stored = await testStore.store.getEvents([a.id, b.id, forged.id, ephemeral.id, c.id]);
    expect(stored.map((event) => event !== null)).toEqual([true, true, false, false, false]);
  });

  it('lines parsed where they are verified: one that is not JSON is counted unreadable, not read, its number among the examples in order (on threads and without)', async () => {
    for (const copies of [5, 300]) {
      const lines: string[] = [];
      const bad: number[] = [];
      for (let n = 0; n < copies; n++) {
        lines.push(serializeEvent(signed(`deferred ${n % 7}`, { created_at: 1_700_000_000 + n, content: `d${n}` })));
        if (n % 20 === 3) {
          lines.push(n % 40 === 3 ? '{"id": truncated}' : '{"unquoted": x}');
          bad.push(lines.length);
        }
      }
      lines.push('garbage');
      bad.push(lines.length);
      const summary = await importEvents(Readable.from([lines.join('\n')]), testStore.store);
      expect(summary.read).toBe(copies);
      expect(summary.unreadableLines).toBe(bad.length);
      expect(summary.unreadableExamples).toEqual(bad.slice(0, 10));
      expect(summary.stored + summary.duplicate).toBe(copies);
    }
  });

  it('imports the real-event fixtures', async () => {
    const events = realEvents();
    const summary = await importEvents(
      Readable.from([events.map(serializeEvent).join('\n')]),
      testStore.store,
    );
    expect(summary.read).toBe(events.length);
    expect(summary.invalid).toEqual({});
    expect(summary.stored + summary.replaced + summary.superseded + summary.duplicate).toBe(events.length);
  });

  it('fails when the store stays unavailable, after retrying with backoff', async () => {
    const broken = await createTestStore();
    await broken.store.close();
    const retries: number[] = [];
    await expect(
      importEvents(Readable.from([serializeEvent(a)]), broken.store, {
        writeAttempts: 2,
        onRetry: (attempt, waitMs) => retries.push(attempt, waitMs),
      }),
    ).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(retries).toEqual([1, 1000]);
  });

  it('a batch the store refuses for a moment (a command timeout) is retried, and nothing is lost', async () => {
    let failures = 2;
    const flaky: EventStore = Object.create(testStore.store) as EventStore;
    flaky.putEvents = (events) => {
      if (failures-- > 0) return Promise.reject(new StoreUnavailableError({ cause: new Error('Command timed out') }));
      return testStore.store.putEvents(events);
    };
    const retries: number[] = [];
    const events = [signed('retry', { content: '1' }), signed('retry', { content: '2' })];
    const summary = await importEvents(Readable.from([events.map(serializeEvent).join('\n')]), flaky, {
      onRetry: (attempt, waitMs) => retries.push(attempt, waitMs),
    });
    expect(retries).toEqual([1, 1000, 2, 2000]);
    expect(summary.stored).toBe(2);
    expect((await testStore.store.getEvents(events.map((event) => event.id))).map((stored) => stored?.event)).toEqual(events);
  });
});

describe('nostr-lookup import (the command)', () => {
  let testStore: TestStore;
  let dir: string;
  beforeAll(async () => {
    testStore = await createTestStore();
    dir = mkdtempSync(join(tmpdir(), 'nostr-lookup-import-'));
  });
  afterAll(async () => {
    await testStore.cleanup();
  });

  async function run(args: string[], stdin?: string, env: Record<string, string> = {}) {
    const cli = spawnCli(['import', ...args], { ...storeEnv(testStore.prefix), ...env }, stdin ?? '');
    const code = await cli.exited;
    return { code, stdout: cli.stdout(), stderr: cli.stderr() };
  }

  it('reads a file and prints the summary as JSON', async () => {
    const file = join(dir, 'events.jsonl');
    writeFileSync(file, `${serializeEvent(a)}\nbroken line\n${tamperedText.replace(/\n\s*/g, '')}\n`);
    const { code, stdout } = await run([file, '--json']);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({
      read: 2,
      stored: 1,
      invalid: { bad_id: 1 },
      unreadableLines: 1,
    });
  });

  it('reads standard input with "-" and prints a readable summary', async () => {
    const { code, stdout } = await run(['-'], JSON.stringify([b, c]));
    expect(code).toBe(0);
    expect(stdout).toContain('read:        2 events');
    expect(stdout).toContain('stored:      2');
  });

  it('exits non-zero when the input cannot be read', async () => {
    const missing = await run([join(dir, 'missing.jsonl')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('cannot read');
    const directory = await run([dir]);
    expect(directory.code).toBe(1);
  });

  it('exits non-zero on bad configuration, listing the problem', async () => {
    const { code, stderr } = await run(['-'], '', { MAX_PROFILES: 'many' });
    expect(code).toBe(1);
    expect(stderr).toContain('MAX_PROFILES must be a whole number');
  });

  it('refuses a bad --batch-size', async () => {
    const { code, stderr } = await run(['-', '--batch-size', '0']);
    expect(code).not.toBe(0);
    expect(stderr).toContain('must be a whole number');
  });
});

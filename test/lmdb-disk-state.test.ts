import { describe, expect, it } from 'vitest';
import { DiskState, errnoName, refusal } from '../src/store/embedded/lmdb-disk-state.js';
import { StoreUnavailableError } from '../src/store/event-store.js';
import { warnStoreFailure } from '../src/store/store-failure.js';

/** A logger that keeps what it is told. */
function recording() {
  const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
  const at = (level: string) => (fields: object, message: string) => void lines.push({ level, fields: fields as Record<string, unknown>, message });
  return { lines, warn: at('warn'), info: at('info') };
}

describe('the cause of a failed write, by its errno', () => {
  it("reads lmdb-js' numbers, Node's names and strerror's words; anything else is no errno", () => {
    expect(errnoName({ code: 30, message: 'Read-only file system: Attempting to setup locks' })).toBe('EROFS');
    expect(errnoName({ code: 13, message: 'Permission denied: Attempting to setup locks' })).toBe('EACCES');
    expect(errnoName({ code: 5, message: 'Input/output error' })).toBe('EIO');
    expect(errnoName({ code: 'ENOSPC' })).toBe('ENOSPC');
    expect(errnoName(new Error('No space left on device'))).toBe('ENOSPC');
    // Hostile or odd: a code that is no errno, a message that names none, nothing at all.
    expect(errnoName({ code: 'rm -rf /', message: 'x' })).toBeUndefined();
    expect(errnoName({ code: 1e12 })).toBeUndefined();
    expect(errnoName({ code: -30 })).toBe('EROFS');
    expect(errnoName(null)).toBeUndefined();
    expect(errnoName('Read-only file system')).toBeUndefined();
  });

  it('says a known errno in words, any other as the commit failure it is', () => {
    expect(refusal({ code: 30, message: 'Read-only file system' }).message).toBe('DATA_DIR is on a read-only file system (EROFS)');
    expect(refusal({ code: 'ENOSPC' }, 'less than 1 MiB free').message).toBe('the disk of DATA_DIR is full (ENOSPC: less than 1 MiB free)');
    const io = refusal(Object.assign(new Error('Input/output error\n    at somewhere'), { code: 5 }), '3.2 MiB free');
    expect(io.message).toBe('a commit to DATA_DIR failed (EIO: Input/output error; 3.2 MiB free)');
    expect(io.code).toBe('EIO');
  });
});

describe('the disk state in the log', () => {
  it('one line as writes start failing, none while they go on failing, one as they land again', () => {
    const log = recording();
    const disk = new DiskState(log, '/data');
    const full = refusal({ code: 'ENOSPC' }, 'less than 1 MiB free');
    for (let index = 0; index < 100; index++) disk.refusedFor(full);
    disk.landed();
    disk.landed();
    expect(log.lines.map(({ level, message }) => [level, message])).toEqual([
      ['warn', 'writes failing: the disk of DATA_DIR is full (ENOSPC: less than 1 MiB free)'],
      ['info', expect.stringMatching(/^writes to DATA_DIR work again after \d+(\.\d)? s \(100 refused meanwhile\)$/)],
    ]);
    expect(log.lines[1]?.fields).toMatchObject({ dataDir: '/data', refused: 100 });
  });

  it('a new cause is a new line; a cause said within the minute is not said again (a nearly full disk flips)', () => {
    const log = recording();
    const disk = new DiskState(log, '/data');
    const full = refusal({ code: 'ENOSPC' }, 'less than 1 MiB free');
    const io = refusal({ code: 5, message: 'Input/output error' });
    disk.refusedFor(full);
    disk.refusedFor(io);
    disk.landed();
    // Flipping: fails, lands, fails, lands… within the minute: nothing more.
    for (let index = 0; index < 50; index++) {
      disk.refusedFor(full);
      disk.landed();
    }
    expect(log.lines.map(({ message }) => message)).toEqual([
      'writes failing: the disk of DATA_DIR is full (ENOSPC: less than 1 MiB free)',
      'writes failing: a commit to DATA_DIR failed (EIO: Input/output error)',
      expect.stringMatching(/^writes to DATA_DIR work again after .* \(2 refused meanwhile\)$/),
    ]);
  });

  it('opened read-only: said at once, and nothing for the writes refused after it', () => {
    const log = recording();
    const disk = new DiskState(log, '/data');
    const readOnly = refusal({ code: 30, message: 'Read-only file system: Attempting to setup locks' });
    disk.openedReadOnly(readOnly);
    for (let index = 0; index < 100; index++) disk.refusedFor(readOnly);
    expect(log.lines.map(({ level, message }) => [level, message])).toEqual([
      ['warn', 'DATA_DIR is on a read-only file system (EROFS): opened read-only, serving what it holds, storing nothing'],
    ]);
  });
});

describe('a store failure a path goes on without', () => {
  it('is logged with its stack if unknown, in words if a known state, not at all if the disk state says it', () => {
    const log = recording();
    warnStoreFailure(log, new Error('a bug'), 'could not store events fetched from relays');
    warnStoreFailure(log, new StoreUnavailableError({ cause: new Error('Connection is closed.') }), 'could not record relay lookups in the store', { fill: 'x' });
    warnStoreFailure(log, new StoreUnavailableError({ cause: refusal({ code: 'ENOSPC' }) }), 'could not claim relay lookups in the store');
    expect(log.lines.map(({ fields, message }) => [message, Object.keys(fields)])).toEqual([
      ['could not store events fetched from relays', ['err']],
      ['could not record relay lookups in the store', ['store', 'fill']],
    ]);
    expect(log.lines[1]?.fields.store).toBe('not connected');
  });
});

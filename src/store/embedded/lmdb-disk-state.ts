import { constants } from 'node:os';
import { WritesRefusedError } from '../event-store.js';

/** Where the embedded store says its disk's state: the service's logger (openStore), or nowhere. */
export interface DiskLog {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

/**
 * A failure said in the log is not said again for this long, whatever happens meanwhile: on a
 * nearly full disk small writes land while large ones fail, and each flip would be a line.
 */
const REPEAT_AFTER_MS = 60_000;

/** What an errno means for DATA_DIR, in words (the code follows them in every line). */
const MEANINGS: Record<string, string> = {
  EROFS: 'DATA_DIR is on a read-only file system',
  ENOSPC: 'the disk of DATA_DIR is full',
  EDQUOT: 'the disk quota of DATA_DIR is used up',
  EACCES: 'DATA_DIR may not be written by this user',
  EPERM: 'DATA_DIR may not be written by this user',
};

/**
 * lmdb-js' errors carry the errno as a number (`code: 30`) and strerror's words ("Read-only file
 * system: Attempting to setup locks"); Node's as a name (`code: 'EROFS'`).
 */
const WORDS: [RegExp, string][] = [
  [/read-only file system/i, 'EROFS'],
  [/no space left/i, 'ENOSPC'],
  [/quota exceeded/i, 'EDQUOT'],
  [/permission denied/i, 'EACCES'],
  [/operation not permitted/i, 'EPERM'],
];

/** The errno name of a file-system failure, where it has one. */
export function errnoName(error: unknown): string | undefined {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
  if (typeof code === 'number') {
    const named = Object.entries(constants.errno).find(([, value]) => value === Math.abs(code));
    if (named) return named[0];
  }
  return WORDS.find(([pattern]) => pattern.test(String(message ?? '')))?.[1];
}

/** Writes refused for `failure` (a file-system error of LMDB's), said as MEANINGS say it. */
export function refusal(failure: unknown, detail?: string): WritesRefusedError {
  const code = errnoName(failure);
  const meaning = code === undefined ? undefined : MEANINGS[code];
  const words = (failure as Error | undefined)?.message?.split('\n', 1)[0] ?? String(failure);
  const said = meaning
    ? `${meaning} (${code}${detail ? `: ${detail}` : ''})`
    : `a commit to DATA_DIR failed (${code ? `${code}: ` : ''}${words}${detail ? `; ${detail}` : ''})`;
  return new WritesRefusedError(said, code, { cause: failure });
}

/**
 * Whether DATA_DIR takes writes, said in the log as the Redis outage is (StoreOutage): one line as
 * writes start failing, naming the cause by its errno (EROFS, ENOSPC, EACCES…), one if the cause
 * changes, one as writes land again, with how long and how many were refused; never a stack (the
 * cause is known, and LMDB's stack only shows lmdb-js). The writes refused meanwhile are counted,
 * not logged, here or by whoever asked for them (store/store-failure.ts).
 */
export class DiskState {
  /** The failure the log says is under way (undefined: writes work, as far as the log says). */
  private said: WritesRefusedError | undefined;
  private since = 0;
  private refused = 0;
  /** When each errno (or message, where none) was last said, for REPEAT_AFTER_MS. */
  private readonly saidAt = new Map<string, number>();

  constructor(
    private readonly log: DiskLog | undefined,
    private readonly dataDir: string | undefined,
  ) {}

  /** Opened read-only for `cause`: said once, at once; it lasts until a restart. */
  openedReadOnly(cause: WritesRefusedError): void {
    this.said = cause;
    this.since = Date.now();
    this.log?.warn({ dataDir: this.dataDir, code: cause.code }, `${cause.message}: opened read-only, serving what it holds, storing nothing`);
  }

  /** A write refused for `cause`. */
  refusedFor(cause: WritesRefusedError): void {
    this.refused += 1;
    const key = cause.code ?? cause.message;
    if (this.said !== undefined && (this.said.code ?? this.said.message) === key) return;
    const now = Date.now();
    if (now - (this.saidAt.get(key) ?? Number.NEGATIVE_INFINITY) < REPEAT_AFTER_MS) return;
    this.saidAt.set(key, now);
    if (this.said === undefined) this.since = now;
    this.said = cause;
    const refused = this.refused > 1 ? { refused: this.refused } : {};
    this.log?.warn({ dataDir: this.dataDir, code: cause.code, ...refused }, `writes failing: ${cause.message}`);
  }

  /** A write landed: if the log says writes fail, it now says they work. */
  landed(): void {
    if (this.said === undefined) {
      this.refused = 0;
      return;
    }
    const seconds = Math.round((Date.now() - this.since) / 100) / 10;
    const { refused } = this;
    this.said = undefined;
    this.refused = 0;
    this.log?.info({ dataDir: this.dataDir, seconds, refused }, `writes to DATA_DIR work again after ${seconds} s (${refused} refused meanwhile)`);
  }
}

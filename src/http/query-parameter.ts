import { LookupError } from '../errors.js';

/**
 * The value of a query parameter that must appear exactly once and not be empty (DESIGN §1).
 * Unknown extra parameters are ignored elsewhere; this only looks at `name`.
 */
export function singleQueryParameter(query: unknown, name: string): string {
  const value = (query as Record<string, unknown> | undefined)?.[name];
  if (Array.isArray(value))
    throw new LookupError('repeated_parameter', { message: `Give "${name}" only once.` });
  if (typeof value !== 'string' || value.trim() === '') {
    throw new LookupError('missing_parameter', { message: `The query parameter "${name}" is required.` });
  }
  return value;
}

/** The value of a query parameter that may be left out (absent or empty: undefined), but not repeated. */
export function optionalQueryParameter(query: unknown, name: string): string | undefined {
  const value = (query as Record<string, unknown> | undefined)?.[name];
  if (Array.isArray(value)) throw new LookupError('repeated_parameter', { message: `Give "${name}" only once.` });
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** A screen's `limit`: a whole number from 1 to `most`, `fallback` when left out (else invalid_argument). */
export function pageLimit(value: string | undefined, fallback: number, most: number): number {
  if (value === undefined) return fallback;
  const limit = /^[0-9]{1,3}$/.test(value) ? Number(value) : Number.NaN;
  if (!(limit >= 1 && limit <= most)) {
    throw new LookupError('invalid_argument', { message: `"limit" is a whole number from 1 to ${most}.` });
  }
  return limit;
}

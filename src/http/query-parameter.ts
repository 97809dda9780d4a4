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

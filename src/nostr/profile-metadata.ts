import { MAX_METADATA_CHARS } from './work-caps.js';

/**
 * The metadata of a kind-0 event (NIP-01 name/about/picture, NIP-24 extra fields, NIP-05, NIP-57
 * lud06/lud16). Content is untrusted: anything that is not a JSON object yields all-null fields, and
 * a field of the wrong type is null rather than an error. Content over MAX_METADATA_CHARS is not
 * parsed: all-null fields.
 */
export interface ProfileMetadata {
  name: string | null;
  display_name: string | null;
  about: string | null;
  picture: string | null;
  banner: string | null;
  website: string | null;
  nip05: string | null;
  lud06: string | null;
  lud16: string | null;
  bot: boolean | null;
}

const STRING_FIELDS = ['name', 'about', 'picture', 'banner', 'website', 'nip05', 'lud06', 'lud16'] as const;

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

export function parseProfileMetadata(content: string): ProfileMetadata {
  let parsed: unknown;
  // Content over the cap is not read at all (nostr/work-caps.ts): its fields are null.
  if (content.length <= MAX_METADATA_CHARS) {
    try {
      parsed = JSON.parse(content);
    } catch {
      parsed = undefined;
    }
  }
  const source: Record<string, unknown> =
    typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  const metadata = Object.fromEntries(
    STRING_FIELDS.map((field) => [field, stringOrNull(source[field])]),
  ) as Omit<ProfileMetadata, 'display_name' | 'bot'>;
  return {
    ...metadata,
    // NIP-24: `displayName` is the deprecated spelling of `display_name`.
    display_name: stringOrNull(source.display_name) ?? stringOrNull(source.displayName),
    bot: typeof source.bot === 'boolean' ? source.bot : null,
  };
}

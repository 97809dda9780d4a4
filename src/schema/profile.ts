import type { FieldMap } from '@pothos/core';
import { LookupError } from '../errors.js';
import { guarded } from '../fill/read-through.js';
import type { Nip05Verification } from '../nip05/nip05-verification.js';
import { type Nip05Name, type PubkeyPointer, parseProfilePointer, parsePubkey } from '../nostr/identifiers.js';
import type { ProfileMetadata } from '../nostr/profile-metadata.js';
import { isOversized, profileMetadataOf } from '../store/derived-values.js';
import type { Held, StoredEvent } from '../store/event-store.js';
import { storedEventPubkey } from '../store/stored-event.js';
import { isDeleted } from '../store/tombstones.js';
import { builder } from './builder.js';
import { answered, type GraphQLContext } from './context.js';
import { EventRef } from './event.js';
import { loadAll } from './loaders.js';

/**
 * A profile: the latest kind-0 event of a pubkey. Its metadata is parsed once per event for the
 * whole process (store/derived-values.ts), however many objects and aliases ask for it.
 */
export class Profile {
  #metadata: ProfileMetadata | undefined;

  constructor(
    readonly stored: StoredEvent,
    /** Charged when its metadata is asked for (ObjectBudget.chargeDerived: once per profile per request). */
    private readonly charge?: (stored: StoredEvent) => void,
  ) {}

  /** The kind-0 event itself. */
  get event(): StoredEvent {
    return this.stored;
  }

  /** Read from the stored bytes at its fixed offset: parsing every profile only for its pubkey was a third of /event's CPU. */
  get pubkey(): string {
    return storedEventPubkey(this.stored);
  }

  get metadata(): ProfileMetadata {
    if (this.#metadata === undefined) {
      // A profile too large to have metadata is never parsed: it costs nothing.
      if (!isOversized(this.stored)) this.charge?.(this.stored);
      this.#metadata = profileMetadataOf(this.stored);
    }
    return this.#metadata;
  }
}

/** A profile, or null where none is held or it was deleted (NIP-09, NIP-62). */
export function toProfile(stored: Held, charge?: (stored: StoredEvent) => void): Profile | null {
  return stored && !isDeleted(stored) ? new Profile(stored, charge) : null;
}

export const ProfileRef = builder.objectRef<Profile>('Profile');

/**
 * A pubkey as such (`Query.pubkey`): what it follows, who follows it and what it wrote are its own,
 * profile or not (DESIGN "Relationships"); follows.ts and notes.ts give Profile and Pubkey the same fields.
 */
export interface PubkeySubject {
  pubkey: string;
}

export const PubkeyRef = builder.objectRef<PubkeySubject>('Pubkey').implement({
  description: 'A pubkey, whether or not it has a profile: its profile, follows and notes.',
  fields: (t) => ({
    pubkey: t.exposeString('pubkey', { description: '64 lowercase hex.' }),
    profile: t.field({
      type: ProfileRef,
      nullable: true,
      description:
        "The pubkey's latest profile, read as `profile(pubkey:)` reads it; null when none is known, or it was deleted or its author asked to vanish, and null with an error when it could not be read (relays_unavailable, rate_limited…).",
      // Not as an edge's (follows.ts): the pubkey the query names gets the errors profile(pubkey:) would.
      resolve: async ({ pubkey }, _args, { loaders, budget }) => {
        budget.charge(1);
        return toProfile(await loaders.profiles.load(pubkey), budget.derivedCharger);
      },
    }),
  }),
});

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

/** Fields that need only a pubkey, for both Profile and Pubkey (`builder.objectFields` on each). */
export type FieldsOfPubkey = <Shape extends PubkeySubject>(t: PothosSchemaTypes.ObjectFieldBuilder<Types, Shape>) => FieldMap;

const Nip05StatusRef = builder.enumType('Nip05Status', {
  description: 'What the domain of a profile\'s declared NIP-05 identifier says about it.',
  values: {
    VERIFIED: { description: "The domain's nostr.json maps the name to this profile's pubkey." },
    MISMATCH: {
      description: 'The domain maps the name to another pubkey or does not know it, or the declared value is not a NIP-05 identifier.',
    },
    UNREACHABLE: {
      description: 'The domain could not be asked: unreachable, too slow, redirected, not a public address, or no valid nostr.json.',
    },
    NOT_CHECKED: { description: 'Not checked yet: a check has started in the background; ask again shortly.' },
  } as const,
});

const Nip05VerificationRef = builder.objectRef<Nip05Verification>('Nip05Verification').implement({
  description:
    "The service's own check of a profile's nip05 (NIP-05), made in the background after a read and repeated at most once per NIP05_TTL: what the profile claims about itself proves nothing.",
  fields: (t) => ({
    status: t.field({ type: Nip05StatusRef, resolve: (verification) => verification.status }),
    checkedAt: t.field({
      type: 'Timestamp',
      nullable: true,
      description: 'When the domain was asked; null if it was not (NOT_CHECKED, or a value that is no identifier).',
      resolve: (verification) => verification.checkedAt,
    }),
  }),
});

const metadataField = (description: string, field: Exclude<keyof ProfileMetadata, 'bot'>) =>
  ({ nullable: true, description, resolve: (profile: Profile) => profile.metadata[field] }) as const;

ProfileRef.implement({
  description:
    'The latest kind-0 event of a pubkey and its metadata. Metadata fields are null when absent, not strings, or when the content is not a JSON object.',
  fields: (t) => ({
    // Exposed (property reads, no resolvers): see withPropertyFieldsInline in index.ts.
    pubkey: t.exposeString('pubkey'),
    event: t.expose('event', { type: EventRef, description: 'The kind-0 event itself.' }),
    name: t.string(metadataField('NIP-01 name.', 'name')),
    displayName: t.string(
      metadataField('NIP-24 display_name (or the deprecated displayName).', 'display_name'),
    ),
    about: t.string(metadataField('NIP-01 about.', 'about')),
    picture: t.string(metadataField('NIP-01 picture URL.', 'picture')),
    banner: t.string(metadataField('NIP-24 banner URL.', 'banner')),
    website: t.string(metadataField('NIP-24 website URL.', 'website')),
    nip05: t.string(metadataField('NIP-05 identifier, as the profile declares it: see nip05Verification.', 'nip05')),
    nip05Verification: t.field({
      type: Nip05VerificationRef,
      nullable: true,
      description:
        'Whether the declared nip05 holds, as last checked by this service (never blocking this read: NOT_CHECKED until a first check ends). Null when the profile declares none.',
      resolve: async (profile, _args, { loaders, nip05 }) => {
        const declared = profile.metadata.nip05;
        if (declared === null || declared.trim() === '') return null;
        if (!nip05) return { status: 'NOT_CHECKED', checkedAt: null } satisfies Nip05Verification;
        return nip05.verifier.verdict(profile.pubkey, declared, await loaders.nip05Verifications.load(profile.pubkey));
      },
    }),
    lud06: t.string(metadataField('LNURL (NIP-57).', 'lud06')),
    lud16: t.string(metadataField('Lightning address (NIP-57).', 'lud16')),
    bot: t.boolean({
      nullable: true,
      description: 'NIP-24: true if the profile says it is automated.',
      resolve: (profile) => profile.metadata.bot,
    }),
  }),
});

builder.queryFields((t) => ({
  profile: t.field({
    type: ProfileRef,
    nullable: true,
    description:
      'The latest profile of a pubkey: hex, npub1… or nprofile1…, optionally prefixed nostr:, or a NIP-05 name@domain (resolved at https://domain/.well-known/nostr.json; errors nip05_not_found, nip05_unresolvable). Null if none, or if it was deleted (NIP-09) or its author asked to vanish (NIP-62).',
    args: { pubkey: t.arg.string({ required: true }) },
    resolve: async (_root, { pubkey }, context) => {
      const { loaders, budget } = context;
      budget.charge(1);
      const found = await pubkeyOfArgument(context, pubkey);
      return toProfile(answered(context, found, await loaders.profiles.load(found)), budget.derivedCharger);
    },
  }),
  pubkey: t.field({
    type: PubkeyRef,
    nullable: true,
    description:
      'A pubkey, named as `profile` takes it (hex, npub1…, nprofile1…, nostr:…, NIP-05 name@domain), whether or not it has a profile: for the follows and notes of a pubkey that never published one. Never null for a valid pubkey; null with an error for an argument that names none (invalid_pubkey, secret_key_refused, nip05_not_found, nip05_unresolvable).',
    args: { pubkey: t.arg.string({ required: true }) },
    resolve: async (_root, { pubkey }, context) => {
      context.budget.charge(1);
      return { pubkey: await pubkeyOfArgument(context, pubkey) };
    },
  }),
  profiles: t.field({
    type: [ProfileRef],
    nullable: { list: false, items: true },
    description:
      'Latest profiles of pubkeys, in the order given, one entry per distinct pubkey (a repeated pubkey is answered once, at its first place); null where none or deleted. At most MAX_LIST_LENGTH pubkeys.',
    args: { pubkeys: t.arg.stringList({ required: true }) },
    resolve: async (_root, { pubkeys }, { loaders, limits, relays, budget }) => {
      if (pubkeys.length > limits.maxListLength) throw new LookupError('list_too_long');
      const pointers = pubkeys.map(parsePubkey);
      for (const pointer of pointers) relays?.request.addHints(pointer.relays);
      // Distinct pubkeys only: the same pubkey a hundred times must not cost a hundred answers.
      const distinct = [...new Set(pointers.map((pointer) => pointer.pubkey))];
      budget.charge(distinct.length);
      const found = await loadAll(loaders.profiles, distinct);
      return found.map((held) => toProfile(held, budget.derivedCharger));
    },
  }),
}));

/**
 * The pubkey an argument names (hex, npub, nprofile, NIP-05 name: identifiers.ts parseProfilePointer),
 * its relay hints passed on to the request's relays; invalid_pubkey or a NIP-05 error otherwise.
 */
export async function pubkeyOfArgument(context: GraphQLContext, argument: string): Promise<string> {
  const parsed = parseProfilePointer(argument);
  // A NIP-05 name is resolved beside the store (nip05/): an answer made with it is not kept.
  if ('identifier' in parsed) context.reads?.spoil();
  const pointer = 'identifier' in parsed ? await pubkeyOfName(context, parsed) : parsed;
  context.relays?.request.addHints(pointer.relays);
  return pointer.pubkey;
}

/**
 * The pubkey a NIP-05 name stands for, with the relays its nostr.json lists as hints; the name not
 * known → nip05_not_found, the domain no use → nip05_unresolvable (both 404: nothing failed here).
 */
async function pubkeyOfName(context: GraphQLContext, name: Nip05Name): Promise<PubkeyPointer> {
  const { nip05, relays, client, missLimit } = context;
  if (!nip05) throw new LookupError('nip05_unresolvable');
  // Within the request's relay deadline, so that a slow domain leaves time to find the profile.
  const waitMs = relays?.request.queryMsLeft();
  const options = { client, ...(waitMs === undefined ? {} : { waitMs }), ...(missLimit ? { missLimit } : {}) };
  const { answer } = await guarded(() => nip05.resolver.resolve(name, options));
  if (answer.kind === 'found') return { pubkey: answer.pubkey, relays: answer.relays };
  throw new LookupError(answer.kind === 'not_found' ? 'nip05_not_found' : 'nip05_unresolvable');
}

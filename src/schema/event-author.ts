import { storedEventPubkey } from '../store/stored-event.js';
import { builder } from './builder.js';
import { EventRef } from './event.js';
import { PubkeyRef } from './profile.js';

// From any event to its author, whether or not a profile exists: `author` is the profile alone
// (null without one, and as the REST bodies have it); `authorPubkey` leads to the author's follows,
// notes, feed and notifications in the same query. Here, apart: event.ts and profile.ts import
// each other, and a field of one on the other must wait until both are made.
builder.objectField(EventRef, 'authorPubkey', (t) =>
  t.field({
    type: PubkeyRef,
    description:
      'The author as a Pubkey, whether or not it has a profile: its profile, follows, notes, feed and notifications in the same query (`author` is its profile alone, null when none is known).',
    resolve: (stored, _args, { budget }) => {
      budget.charge(1);
      return { pubkey: storedEventPubkey(stored) };
    },
  }),
);

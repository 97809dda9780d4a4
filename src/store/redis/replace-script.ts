/**
 * Deletes a key only if it still holds the given value (a stale marker, not one rewritten since).
 * KEYS[1] the key; ARGV[1] the value.
 */
export const DELETE_IF_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`;

/**
 * The NIP-01 replaceable-event rule (nostr/kinds.ts `supersedes`, mirrored here in Lua) as one
 * atomic Redis script over one key (the address's slot): the newest `created_at` wins; on a tie the
 * lowest id wins. Running inside Redis makes concurrent or
 * out-of-order writers unable to regress a profile.
 *
 * KEYS[1] the slot key; ARGV[1] the new event's wire JSON; ARGV[2] its id; ARGV[3] its created_at.
 * Returns {outcome, previous id}: stored | replaced | superseded | duplicate.
 *
 * The held value is JSON we wrote with serializeEvent, so its id sits at a fixed offset
 * (`{"id":"` is 7 bytes) and created_at follows the pubkey. A value that does not parse that way is
 * not ours and is overwritten.
 */
export const REPLACE_SCRIPT = `
local held = redis.call('GET', KEYS[1])
if not held then
  redis.call('SET', KEYS[1], ARGV[1])
  return {'stored', ''}
end
local heldId = string.sub(held, 8, 71)
local heldCreatedAt = tonumber(string.match(held, '"created_at":(%d+)', 148))
if heldId == ARGV[2] then
  return {'duplicate', heldId}
end
local createdAt = tonumber(ARGV[3])
local newer
if heldCreatedAt == nil or string.len(heldId) ~= 64 then
  newer = true
elseif createdAt ~= heldCreatedAt then
  newer = createdAt > heldCreatedAt
else
  -- tie: the lowest id wins; ids are lowercase hex, so bytewise order is the order
  newer = false
  for i = 1, 64 do
    local a, b = string.byte(ARGV[2], i), string.byte(heldId, i)
    if a ~= b then
      newer = a < b
      break
    end
  end
end
if newer then
  redis.call('SET', KEYS[1], ARGV[1])
  return {'replaced', heldId}
end
return {'superseded', heldId}
`;

/**
 * The Redis store's scripts: the NIP-01 replaceable rule, and the rules of store/tombstones.ts, in
 * Lua, each over one key (so that they run unchanged on Redis Cluster), for the values it keeps:
 * - under `e:<id>`: the event's wire JSON (`{`…), a marker `@<address>`, a tombstone `x<author>`, or
 *   a pending deletion `p<pubkey>…`;
 * - under `r:<address>`: the latest version's JSON, or a bar `x<created_at>[:<id>]`.
 * JSON values are what serializeEvent wrote: the id at bytes 8–71, the pubkey at 84–147, then
 * `"created_at":` and `"kind":`.
 */

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

/** Shared helpers: NIP-01's order of versions (nostr/kinds.ts `supersedes`), '' lowest. */
const HELPERS = `
local function lower(a, b)
  local n = math.min(string.len(a), string.len(b))
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return string.len(a) < string.len(b)
end
local function supersedes(aTime, aId, bTime, bId)
  if aTime ~= bTime then return aTime > bTime end
  return lower(aId, bId)
end
local function bar(time, id)
  if id == '' then return 'x' .. time end
  return 'x' .. time .. ':' .. id
end
local function pendingHas(held, pubkey)
  for at = 2, string.len(held) - 63, 64 do
    if string.sub(held, at, at + 63) == pubkey then return true end
  end
  return false
end
local function jsonKind(held)
  return string.match(held, '"kind":(%d+)', 148)
end
`;

/**
 * The NIP-01 replaceable-event rule as one atomic script over the address's slot: the newest
 * `created_at` wins; on a tie the lowest id wins. Running inside Redis makes concurrent or
 * out-of-order writers unable to regress a profile. A bar (a deleted version, or every version up to
 * a time) admits only versions that supersede it.
 *
 * KEYS[1] the slot key; ARGV[1] the new event's wire JSON; ARGV[2] its id; ARGV[3] its created_at.
 * Returns {outcome, previous id}: stored | replaced | superseded | duplicate | deleted. A value that
 * is neither our JSON nor a bar is not ours and is overwritten.
 */
export const REPLACE_SCRIPT = `${HELPERS}
local held = redis.call('GET', KEYS[1])
if not held then
  redis.call('SET', KEYS[1], ARGV[1])
  return {'stored', ''}
end
local createdAt = tonumber(ARGV[3])
if string.sub(held, 1, 1) == 'x' then
  local barTime, barId = string.match(held, '^x(%d+):?(%x*)$')
  barTime = tonumber(barTime)
  if barTime == nil or supersedes(createdAt, ARGV[2], barTime, barId) then
    redis.call('SET', KEYS[1], ARGV[1])
    return {'stored', ''}
  end
  if barId == '' or barId == ARGV[2] then return {'deleted', ''} end
  return {'superseded', ''}
end
local heldId = string.sub(held, 8, 71)
local heldCreatedAt = tonumber(string.match(held, '"created_at":(%d+)', 148))
if heldId == ARGV[2] then
  return {'duplicate', heldId}
end
if heldCreatedAt == nil or string.len(heldId) ~= 64 or supersedes(createdAt, ARGV[2], heldCreatedAt, heldId) then
  redis.call('SET', KEYS[1], ARGV[1])
  return {'replaced', heldId}
end
return {'superseded', heldId}
`;

/**
 * A regular event: stored unless held, or deleted by its author (a tombstone, or a pending deletion
 * naming its author, which becomes a tombstone). Deletions and requests to vanish (ARGV[3] = '1')
 * are never deleted by a deletion (NIP-09).
 * KEYS[1] `e:<id>`; ARGV[1] the wire JSON; ARGV[2] the author; ARGV[3] '1' if undeletable.
 * Returns stored | duplicate | deleted.
 */
export const PUT_REGULAR_SCRIPT = `${HELPERS}
local held = redis.call('GET', KEYS[1])
if held then
  local first = string.sub(held, 1, 1)
  if first == 'x' then
    if string.sub(held, 2, 65) == ARGV[2] then return 'deleted' end
  elseif first == 'p' then
    if ARGV[3] ~= '1' and pendingHas(held, ARGV[2]) then
      redis.call('SET', KEYS[1], 'x' .. ARGV[2])
      return 'deleted'
    end
  else
    return 'duplicate'
  end
end
redis.call('SET', KEYS[1], ARGV[1])
return 'stored'
`;

/**
 * The marker of a replaceable version, unless its id was deleted by its author (then the tombstone
 * stays, and the caller takes the version out of its slot).
 * KEYS[1] `e:<id>`; ARGV[1] the marker; ARGV[2] the author. Returns ok | deleted.
 */
export const MARK_VERSION_SCRIPT = `${HELPERS}
local held = redis.call('GET', KEYS[1])
if held then
  local first = string.sub(held, 1, 1)
  if first == 'x' and string.sub(held, 2, 65) == ARGV[2] then return 'deleted' end
  if first == 'p' and pendingHas(held, ARGV[2]) then
    redis.call('SET', KEYS[1], 'x' .. ARGV[2])
    return 'deleted'
  end
end
redis.call('SET', KEYS[1], ARGV[1])
return 'ok'
`;

/**
 * An `e` tag of a deletion request (NIP-09): the event goes if its author is the deleter and it is
 * not itself a deletion or a request to vanish; an id not held gets (or joins) a pending deletion.
 * KEYS[1] `e:<id>`; ARGV[1] the deleter; ARGV[2] how many deleters a pending deletion keeps;
 * ARGV[3] its expiry in seconds (from the latest deletion naming the id).
 * Returns {pending | gone | ignored | deleted} or {version, address}: a replaceable version's
 * marker, now a tombstone; the caller takes the version out of its slot.
 */
export const DELETE_ID_SCRIPT = `${HELPERS}
local held = redis.call('GET', KEYS[1])
if not held then
  redis.call('SET', KEYS[1], 'p' .. ARGV[1], 'EX', ARGV[3])
  return {'pending'}
end
local first = string.sub(held, 1, 1)
if first == 'p' then
  if not pendingHas(held, ARGV[1]) and (string.len(held) - 1) / 64 < tonumber(ARGV[2]) then
    redis.call('SET', KEYS[1], held .. ARGV[1], 'EX', ARGV[3])
  else
    redis.call('EXPIRE', KEYS[1], ARGV[3])
  end
  return {'pending'}
end
if first == 'x' then return {'gone'} end
if first == '@' then
  local colon = string.find(held, ':', 2, true)
  if not colon or string.sub(held, colon + 1, colon + 64) ~= ARGV[1] then return {'ignored'} end
  redis.call('SET', KEYS[1], 'x' .. ARGV[1])
  return {'version', string.sub(held, 2)}
end
if string.sub(held, 84, 147) ~= ARGV[1] then return {'ignored'} end
local kind = jsonKind(held)
if kind == '5' or kind == '62' then return {'ignored'} end
redis.call('SET', KEYS[1], 'x' .. ARGV[1])
return {'deleted'}
`;

/**
 * Takes a deleted version out of its slot: if the slot still holds version ARGV[1], it becomes the
 * bar `x<created_at>:<id>`. KEYS[1] the slot. Returns 1 if it did.
 */
export const BAR_VERSION_SCRIPT = `${HELPERS}
local held = redis.call('GET', KEYS[1])
if held and string.sub(held, 1, 1) == '{' and string.sub(held, 8, 71) == ARGV[1] then
  local createdAt = string.match(held, '"created_at":(%d+)', 148)
  if createdAt then
    redis.call('SET', KEYS[1], bar(createdAt, ARGV[1]))
    return 1
  end
end
return 0
`;

/**
 * Raises a slot's bar (an `a` tag, a request to vanish): a held version the bar covers is replaced
 * by it, a newer one stays; the bar is kept even where nothing is held, so that what it covers is
 * refused whenever it arrives. KEYS[1] the slot; ARGV[1] the bar's created_at; ARGV[2] its id ('':
 * every version up to then). Returns the id of the version it removed, or ''.
 */
export const RAISE_BAR_SCRIPT = `${HELPERS}
local time = tonumber(ARGV[1])
local held = redis.call('GET', KEYS[1])
if held and string.sub(held, 1, 1) == 'x' then
  local heldTime, heldId = string.match(held, '^x(%d+):?(%x*)$')
  heldTime = tonumber(heldTime)
  if heldTime and supersedes(heldTime, heldId, time, ARGV[2]) then return '' end
  redis.call('SET', KEYS[1], bar(ARGV[1], ARGV[2]))
  return ''
end
if held then
  local heldId = string.sub(held, 8, 71)
  local heldTime = tonumber(string.match(held, '"created_at":(%d+)', 148))
  local ours = heldTime ~= nil and string.match(heldId, '^%x+$') and string.len(heldId) == 64
  if ours and supersedes(heldTime, heldId, time, ARGV[2]) then return '' end
  redis.call('SET', KEYS[1], bar(ARGV[1], ARGV[2]))
  if ours then return heldId end
  return ''
end
redis.call('SET', KEYS[1], bar(ARGV[1], ARGV[2]))
return ''
`;

/**
 * An event a request to vanish covers: its value becomes a tombstone, unless it is a request to
 * vanish (kept: NIP-62 bookkeeping). KEYS[1] `e:<id>`; ARGV[1] the author. Returns 1 if it did.
 */
export const TOMBSTONE_SCRIPT = `${HELPERS}
local held = redis.call('GET', KEYS[1])
if held and string.sub(held, 1, 1) == '{' and jsonKind(held) == '62' then return 0 end
redis.call('SET', KEYS[1], 'x' .. ARGV[1])
return 1
`;

/** The time of a pubkey's latest request to vanish: raised, never lowered. KEYS[1] `v:<pubkey>`; ARGV[1] the time. */
export const VANISH_AT_SCRIPT = `
local held = tonumber(redis.call('GET', KEYS[1]))
if held and held >= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
return 1
`;

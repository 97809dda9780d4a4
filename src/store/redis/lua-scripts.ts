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
-- An address's journal (keys.ts \`rj\`): this call's entries, '+' a version whose relations are
-- to be added, '-' one whose relations are to go, then the writer's batch token (16 characters),
-- the time (10 digits) and the version's id, or its JSON for '-', each ending in a newline (wire
-- JSON holds none); the caller settles them once applied. Its reply carries the entries found
-- before this call (another writer's transitions not yet applied, or lost), each as its first 27
-- characters and the version's id (91 characters): what the caller needs to judge them. One that
-- heals them reads the journal itself.
local function entry(sign, token, payload)
  return sign .. token .. string.format('%010d', tonumber(redis.call('TIME')[1])) .. payload .. '\\n'
end
local function journal(key, entries)
  local held = redis.call('GET', key)
  if entries ~= '' then redis.call('APPEND', key, entries) end
  if not held then return '' end
  local seen, from = {}, 1
  while from <= #held do
    local stop = string.find(held, '\\n', from, true) or (#held + 1)
    if string.sub(held, from, from) == '+' then
      seen[#seen + 1] = string.sub(held, from, stop)
    else
      seen[#seen + 1] = string.sub(held, from, from + 26) .. string.sub(held, from + 34, from + 97) .. '\\n'
    end
    from = stop + 1
  end
  return table.concat(seen)
end
-- Redis' own time (seconds), which entries are dated by: the caller judges their age by it.
local function now()
  return redis.call('TIME')[1]
end
-- The id of the slot's version after this call, handed back only where a journal was there
-- before (a heal adds back the relations of that version only if it is still held then).
local function currentIf(before, key)
  if before == '' then return '' end
  local held = redis.call('GETRANGE', key, 0, 70)
  if string.sub(held, 1, 1) == '{' and #held == 71 then return string.sub(held, 8, 71) end
  return ''
end
`;

/**
 * The NIP-01 replaceable-event rule as one atomic script over the address's slot: the newest
 * `created_at` wins; on a tie the lowest id wins. Running inside Redis makes concurrent or
 * out-of-order writers unable to regress a profile. A bar (a deleted version, or every version up to
 * a time) admits only versions that supersede it.
 *
 * KEYS[1] the slot key; KEYS[2] its journal; ARGV[1] the new event's wire JSON; ARGV[2] its id;
 * ARGV[3] its created_at; ARGV[4] the writer's batch token. Returns {outcome, previous id, previous
 * JSON (when replaced: its relations go), the journal's entries before (as journal() hands them
 * back), the id of the slot's version where there were some, Redis' time in seconds}; the outcome
 * is stored | replaced | superseded | duplicate | deleted. A value that is neither our JSON nor a
 * bar is not ours and is overwritten. A change of hands is journaled ('+' the new version, '-' the
 * one it replaced) until the caller has applied its relations: a replay after a lost reply finds
 * it there.
 */
export const REPLACE_SCRIPT = `${HELPERS}
local held = redis.call('GET', KEYS[1])
local function took(outcome, heldId, previous)
  redis.call('SET', KEYS[1], ARGV[1])
  local entries = entry('+', ARGV[4], ARGV[2])
  if previous ~= '' then entries = entries .. entry('-', ARGV[4], previous) end
  local before = journal(KEYS[2], entries)
  return {outcome, heldId, previous, before, currentIf(before, KEYS[1]), now()}
end
local function kept(outcome, heldId)
  local before = journal(KEYS[2], '')
  return {outcome, heldId, '', before, currentIf(before, KEYS[1]), now()}
end
if not held then return took('stored', '', '') end
local createdAt = tonumber(ARGV[3])
if string.sub(held, 1, 1) == 'x' then
  local barTime, barId = string.match(held, '^x(%d+):?(%x*)$')
  barTime = tonumber(barTime)
  if barTime == nil or supersedes(createdAt, ARGV[2], barTime, barId) then return took('stored', '', '') end
  if barId == '' or barId == ARGV[2] then return kept('deleted', '') end
  return kept('superseded', '')
end
local heldId = string.sub(held, 8, 71)
local heldCreatedAt = tonumber(string.match(held, '"created_at":(%d+)', 148))
if heldId == ARGV[2] then return kept('duplicate', heldId) end
if heldCreatedAt == nil or string.len(heldId) ~= 64 or supersedes(createdAt, ARGV[2], heldCreatedAt, heldId) then
  if heldCreatedAt == nil or string.len(heldId) ~= 64 then return took('replaced', heldId, '') end
  return took('replaced', heldId, held)
end
return kept('superseded', heldId)
`;

/**
 * Entries of an address's journal (REPLACE), once their relations are applied: KEYS[1] the
 * journal; ARGV each entry that goes, as its sign, its batch token, then its version's id (81
 * characters: another transition's entry for the same version, in this batch or another, stays).
 * The key goes with its last entry.
 */
export const SETTLE_JOURNAL_SCRIPT = `
local held = redis.call('GET', KEYS[1])
if not held then return 0 end
local settled = {}
for i = 1, #ARGV do settled[ARGV[i]] = true end
local kept, from = {}, 1
while from <= #held do
  local stop = string.find(held, '\\n', from, true) or (#held + 1)
  -- After the sign, the token and the time: the id, or the JSON's (at its bytes 8 to 71).
  local id
  if string.sub(held, from, from) == '+' then id = string.sub(held, from + 27, from + 90) else id = string.sub(held, from + 34, from + 97) end
  if not settled[string.sub(held, from, from + 16) .. id] then kept[#kept + 1] = string.sub(held, from, stop) end
  from = stop + 1
end
if #kept == 0 then return redis.call('DEL', KEYS[1]) end
redis.call('SET', KEYS[1], table.concat(kept))
return 0
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
 * Returns {pending | gone | ignored} or {deleted, the event's JSON} or {version, address}: a
 * replaceable version's marker, now a tombstone; the caller takes the version out of its slot (the
 * tombstone keeps the marker after a newline until it has: a replay gets {version, address} again).
 * A deleted event's tombstone keeps its JSON after a newline until the caller has removed its
 * relations (SETTLE_TOMBSTONE_SCRIPT): a request replayed after that reply was lost (or sent by a
 * second writer meanwhile) gets {deleted, JSON} again, and the relations go then (each target
 * counts an event once, RELATE); the settle, once, counts it out of the events held by kind.
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
if first == 'x' then
  local settled = string.find(held, '\\n', 2, true)
  if settled and string.sub(held, 2, 65) == ARGV[1] then
    if string.sub(held, settled + 1, settled + 1) == '@' then return {'version', string.sub(held, settled + 2)} end
    return {'deleted', string.sub(held, settled + 1)}
  end
  return {'gone'}
end
if first == '@' then
  local colon = string.find(held, ':', 2, true)
  if not colon or string.sub(held, colon + 1, colon + 64) ~= ARGV[1] then return {'ignored'} end
  redis.call('SET', KEYS[1], 'x' .. ARGV[1] .. '\\n' .. held)
  return {'version', string.sub(held, 2)}
end
if string.sub(held, 84, 147) ~= ARGV[1] then return {'ignored'} end
local kind = jsonKind(held)
if kind == '5' or kind == '62' then return {'ignored'} end
redis.call('SET', KEYS[1], 'x' .. ARGV[1] .. '\\n' .. held)
return {'deleted', held}
`;

/**
 * A tombstone left by DELETE_ID_SCRIPT, once the deleted event's relations are removed: its JSON
 * goes, the tombstone stays. KEYS[1] \`e:<id>\`. Returns 1 if it was still kept, else 0.
 */
export const SETTLE_TOMBSTONE_SCRIPT = `
local held = redis.call('GET', KEYS[1])
if not held or string.sub(held, 1, 1) ~= 'x' then return 0 end
local settled = string.find(held, '\\n', 2, true)
if not settled then return 0 end
redis.call('SET', KEYS[1], string.sub(held, 1, settled - 1))
return 1
`;

/**
 * Takes a deleted version out of its slot: if the slot still holds version ARGV[1], it becomes the
 * bar `x<created_at>:<id>`. KEYS[1] the slot, KEYS[2] its journal (REPLACE: the removal is
 * journaled); ARGV[2] the writer's batch token. Returns {the version's JSON if it did, else '', the
 * journal's entries before, the id of the slot's version, Redis' time}.
 */
export const BAR_VERSION_SCRIPT = `${HELPERS}
local held = redis.call('GET', KEYS[1])
if held and string.sub(held, 1, 1) == '{' and string.sub(held, 8, 71) == ARGV[1] then
  local createdAt = string.match(held, '"created_at":(%d+)', 148)
  if createdAt then
    redis.call('SET', KEYS[1], bar(createdAt, ARGV[1]))
    local before = journal(KEYS[2], entry('-', ARGV[2], held))
    return {held, before, '', now()}
  end
end
local before = journal(KEYS[2], '')
return {'', before, currentIf(before, KEYS[1]), now()}
`;

/**
 * Raises a slot's bar (an `a` tag, a request to vanish): a held version the bar covers is replaced
 * by it, a newer one stays; the bar is kept even where nothing is held, so that what it covers is
 * refused whenever it arrives. KEYS[1] the slot, KEYS[2] its journal; ARGV[1] the bar's created_at;
 * ARGV[2] its id ('': every version up to then); ARGV[3] the writer's batch token. Returns {the
 * JSON of the version it removed, or '', the journal's entries before, the id of the slot's
 * version, Redis' time} (the removal journaled as in BAR_VERSION).
 */
export const RAISE_BAR_SCRIPT = `${HELPERS}
local time = tonumber(ARGV[1])
local held = redis.call('GET', KEYS[1])
local function done(removed)
  local entries = ''
  if removed ~= '' then entries = entry('-', ARGV[3], removed) end
  local before = journal(KEYS[2], entries)
  return {removed, before, currentIf(before, KEYS[1]), now()}
end
if held and string.sub(held, 1, 1) == 'x' then
  local heldTime, heldId = string.match(held, '^x(%d+):?(%x*)$')
  heldTime = tonumber(heldTime)
  if heldTime and supersedes(heldTime, heldId, time, ARGV[2]) then return done('') end
  redis.call('SET', KEYS[1], bar(ARGV[1], ARGV[2]))
  return done('')
end
if held then
  local heldId = string.sub(held, 8, 71)
  local heldTime = tonumber(string.match(held, '"created_at":(%d+)', 148))
  local ours = heldTime ~= nil and string.match(heldId, '^%x+$') and string.len(heldId) == 64
  if ours and supersedes(heldTime, heldId, time, ARGV[2]) then return done('') end
  redis.call('SET', KEYS[1], bar(ARGV[1], ARGV[2]))
  if ours then return done(held) end
  return done('')
end
redis.call('SET', KEYS[1], bar(ARGV[1], ARGV[2]))
return done('')
`;

/**
 * An event a request to vanish covers: its value becomes a tombstone, unless it is a request to
 * vanish (kept: NIP-62 bookkeeping). KEYS[1] `e:<id>`; ARGV[1] the author. Returns the JSON of the
 * event it removed (its relations go), else ''. As DELETE_ID's, the tombstone keeps the JSON after a
 * newline until the caller has removed its relations (SETTLE_TOMBSTONE): a replay after a lost
 * reply gets it again.
 */
export const TOMBSTONE_SCRIPT = `${HELPERS}
local held = redis.call('GET', KEYS[1])
if held and string.sub(held, 1, 1) == 'x' then
  local settled = string.find(held, '\\n{', 2, true)
  if settled then return string.sub(held, settled + 1) end
end
local live = held and string.sub(held, 1, 1) == '{'
if live and jsonKind(held) == '62' then return '' end
if live then
  redis.call('SET', KEYS[1], 'x' .. ARGV[1] .. '\\n' .. held)
  return held
end
redis.call('SET', KEYS[1], 'x' .. ARGV[1])
return ''
`;

/** The time of a pubkey's latest request to vanish: raised, never lowered. KEYS[1] `v:<pubkey>`; ARGV[1] the time. */
export const VANISH_AT_SCRIPT = `
local held = tonumber(redis.call('GET', KEYS[1]))
if held and held >= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
return 1
`;

/**
 * The relationship index of one target (store/relation-index.ts), all of its keys in the target's
 * hash slot: adds (ARGV[1] = 1) or removes (-1) one event's relations to it. Removals and additions
 * sent by different writers commute (a removal that overtook its addition leaves a tombstone, below).
 * Each call does a bounded amount of work, whatever the target already holds.
 * KEYS[1] the target's hash: the TALLY counters; `o<author>`, an author's reposts; `k<author>`, an
 * author's reactions: `<count>\t<content key>` while they used one content (nearly everyone), else
 * `#<positive>:<nonzero>` with a `K<author><content key>` count per content; and the distinct
 * authors per content: `C`, lines `<count>\t<content key>\n`, while there are at most 32 contents,
 * then (`Z`) KEYS[4], a sorted set scored minus the count (so the first entries are the byContent
 * order: count descending, then content bytes). One key per target for a note's few reactions.
 * KEYS[2] the reply list (a sorted set ordered by member bytes), KEYS[3] its tombstones.
 * ARGV[2] the author (32 bytes); ARGV[3] the roles (R reply, T thread reply, Q quote, O repost,
 * K reaction); ARGV[4] the reply's member; ARGV[5] the reaction's content key (contentKey);
 * ARGV[6] the event's ledger entry (`i` and its id's 32 bytes: redis-relation-index.ts ledgerOf);
 * ARGV[7] the event's stored size (storedSizeOf), the entry's value while it counts; ARGV[8] its
 * entry as an earlier format kept it (the id's first 12 bytes), moved to ARGV[6] where found.
 *
 * Applied at most once per (event, target), whatever is sent again: a put whose reply was lost and
 * is replayed relates its event again (redis-event-store.ts), a command that timed out may still
 * run. A reply's member in the list says it was added; any other edge keeps its ledger entry in
 * the hash while it counts (its size). A removal leaves a tombstone for good (the reply's member in
 * KEYS[3], \`-\` in the hash), and no addition counts past it: an event once removed (deleted,
 * replaced, vanished) never comes back, but an addition may still be on its way, from the writer that
 * stored it or from another's replay of a \`duplicate\` put, in either order with the removal.
 * (Tombstones were once taken by the addition they overtook; a replay arriving after both then
 * counted a deleted reaction.) A removed relation costs its tombstone, some 30 bytes, until
 * \`relations rebuild\`. Returns 1 when the call changed the figures, else 0.
 */
export const RELATE_SCRIPT = `
local d = tonumber(ARGV[1])
local roles = ARGV[3]
local author = ARGV[2]
local T = KEYS[1]
local function has(role) return string.find(roles, role, 1, true) ~= nil end
local function hget(field) return redis.call('HGET', T, field) end
local function put(field, count)
  if count == 0 then redis.call('HDEL', T, field) else redis.call('HSET', T, field, string.format('%d', count)) end
end
local function tally(field, change)
  if change == 0 then return end
  if redis.call('HINCRBY', T, field, change) == 0 then redis.call('HDEL', T, field) end
end
local function crossed(was, is) if was == is then return 0 elseif is then return 1 else return -1 end end
local function isLike(key) return key == '"+"' or key == '""' end
local BLOB_MAX = 32
local function byContent(key, change)
  if change == 0 then return end
  if hget('Z') then
    if tonumber(redis.call('ZINCRBY', KEYS[4], -change, key)) == 0 then redis.call('ZREM', KEYS[4], key) end
    return
  end
  local counts, order = {}, {}
  for count, content in string.gmatch(hget('C') or '', '(%-?%d+)\\t([^\\n]*)\\n') do
    counts[content] = tonumber(count)
    order[#order + 1] = content
  end
  if counts[key] == nil then
    counts[key] = 0
    order[#order + 1] = key
  end
  counts[key] = counts[key] + change
  local out = {}
  for _, content in ipairs(order) do
    if counts[content] ~= 0 then out[#out + 1] = string.format('%d', counts[content]) .. '\\t' .. content .. '\\n' end
  end
  if #out > BLOB_MAX then
    for _, content in ipairs(order) do
      if counts[content] ~= 0 then redis.call('ZADD', KEYS[4], -counts[content], content) end
    end
    redis.call('HDEL', T, 'C')
    redis.call('HSET', T, 'Z', '1')
  elseif #out == 0 then
    redis.call('HDEL', T, 'C')
  else
    redis.call('HSET', T, 'C', table.concat(out))
  end
end
if has('R') then
  local member = ARGV[4]
  if d > 0 then
    if redis.call('SISMEMBER', KEYS[3], member) == 1 or redis.call('ZADD', KEYS[2], 0, member) == 0 then return 0 end
  else
    redis.call('SADD', KEYS[3], member)
    if redis.call('ZREM', KEYS[2], member) == 0 then return 0 end
  end
  tally('r', d)
else
  local held = hget(ARGV[6])
  -- An entry of the earlier format (the id's first 12 bytes, '1' or '-'), moved to this one.
  if not held then
    local old = hget(ARGV[8])
    if old then
      redis.call('HDEL', T, ARGV[8])
      if old == '1' then held = ARGV[7] else held = '-' end
      redis.call('HSET', T, ARGV[6], held)
    end
  end
  if d > 0 then
    if held then return 0 end
    redis.call('HSET', T, ARGV[6], ARGV[7])
  else
    redis.call('HSET', T, ARGV[6], '-')
    if not held or held == '-' then return 0 end
  end
end
if has('T') then tally('t', d) end
if has('Q') then tally('q', d) end
if has('O') then
  local field = 'o' .. author
  local after = redis.call('HINCRBY', T, field, d)
  if after == 0 then redis.call('HDEL', T, field) end
  tally('o', crossed(after - d > 0, after > 0))
end
if has('K') then
  local key = ARGV[5]
  local recordField = 'k' .. author
  local record = hget(recordField)
  local before, after = 0, 0
  local anyBefore, likeBefore, dislikeBefore, anyAfter, likeAfter, dislikeAfter
  local function single(count, content) return count > 0, count > 0 and isLike(content), count > 0 and content == '"-"' end
  if not record then
    after = d
    anyBefore, likeBefore, dislikeBefore = false, false, false
    anyAfter, likeAfter, dislikeAfter = single(after, key)
    redis.call('HSET', T, recordField, string.format('%d', after) .. '\\t' .. key)
  elseif string.sub(record, 1, 1) ~= '#' then
    local tab = string.find(record, '\\t', 1, true)
    local held, content = tonumber(string.sub(record, 1, tab - 1)), string.sub(record, tab + 1)
    anyBefore, likeBefore, dislikeBefore = single(held, content)
    if content == key then
      before, after = held, held + d
      anyAfter, likeAfter, dislikeAfter = single(after, key)
      if after == 0 then redis.call('HDEL', T, recordField) else redis.call('HSET', T, recordField, string.format('%d', after) .. '\\t' .. key) end
    else
      -- A second content: each gets a count of its own.
      after = d
      put('K' .. author .. content, held)
      put('K' .. author .. key, after)
      local positive = (held > 0 and 1 or 0) + (after > 0 and 1 or 0)
      redis.call('HSET', T, recordField, '#' .. positive .. ':2')
      local a1, l1, d1 = single(held, content)
      local a2, l2, d2 = single(after, key)
      anyAfter, likeAfter, dislikeAfter = a1 or a2, l1 or l2, d1 or d2
    end
  else
    local positive, nonzero = string.match(record, '^#(%d+):(%d+)$')
    positive, nonzero = tonumber(positive), tonumber(nonzero)
    local function holds(content) return (tonumber(hget('K' .. author .. content)) or 0) > 0 end
    anyBefore, likeBefore, dislikeBefore = positive > 0, holds('"+"') or holds('""'), holds('"-"')
    before = tonumber(hget('K' .. author .. key)) or 0
    after = before + d
    put('K' .. author .. key, after)
    positive = positive + crossed(before > 0, after > 0)
    if before == 0 then nonzero = nonzero + 1 elseif after == 0 then nonzero = nonzero - 1 end
    if nonzero == 0 then redis.call('HDEL', T, recordField) else redis.call('HSET', T, recordField, '#' .. positive .. ':' .. nonzero) end
    anyAfter, likeAfter, dislikeAfter = positive > 0, holds('"+"') or holds('""'), holds('"-"')
  end
  tally('p', crossed(anyBefore, anyAfter))
  tally('+', crossed(likeBefore, likeAfter))
  tally('-', crossed(dislikeBefore, dislikeAfter))
  byContent(key, crossed(before > 0, after > 0))
end
return 1
`;

/**
 * One zap receipt added to (ARGV[1] = 1) or taken from (-1) one subject's group (store/zap-index.ts):
 * KEYS[1] the subject's groups: the 64-byte group (ARGV[2]) → `<receipts> <high> <low> <distinct
 * senders>` (msats in two parts, zap-index.ts MSATS_SPLIT: each exact in a Lua number, whatever the
 * order of additions and removals), and the 32-byte recipient (ARGV[3]) → its receipts, whoever
 * signed them; KEYS[2] the group's receipts per sender (ARGV[4], 32 bytes). Every field is at most
 * 64 bytes, so both hashes stay compact listpacks. ARGV[5], ARGV[6]: the parts with the delta's sign.
 * ARGV[7]: the receipt's ledger entry (`i` and its id's 32 bytes), ARGV[8] its stored size and
 * ARGV[9] its entry in the earlier format (moved where found), kept in KEYS[1] as RELATE keeps them: a
 * receipt counts at most once per subject, whatever is sent again.
 * Returns the sender's receipts in the group, or false when nothing changed.
 */
export const ZAP_SCRIPT = `
local d = tonumber(ARGV[1])
local g = ARGV[2]
local seen = redis.call('HGET', KEYS[1], ARGV[7])
-- An entry of the earlier format (the id's first 12 bytes, '1' or '-'), moved to this one.
if not seen then
  local old = redis.call('HGET', KEYS[1], ARGV[9])
  if old then
    redis.call('HDEL', KEYS[1], ARGV[9])
    if old == '1' then seen = ARGV[8] else seen = '-' end
    redis.call('HSET', KEYS[1], ARGV[7], seen)
  end
end
if d > 0 then
  if seen then return false end
  redis.call('HSET', KEYS[1], ARGV[7], ARGV[8])
else
  redis.call('HSET', KEYS[1], ARGV[7], '-')
  if not seen or seen == '-' then return false end
end
local s = redis.call('HINCRBY', KEYS[2], ARGV[4], d)
if s == 0 then redis.call('HDEL', KEYS[2], ARGV[4]) end
if redis.call('HINCRBY', KEYS[1], ARGV[3], d) == 0 then redis.call('HDEL', KEYS[1], ARGV[3]) end
local c, h, l, n = 0, 0, 0, 0
local held = redis.call('HGET', KEYS[1], g)
if held then
  local a, b, x, e = string.match(held, '^(%-?%d+) (%-?%d+) (%-?%d+) (%-?%d+)$')
  c, h, l, n = tonumber(a), tonumber(b), tonumber(x), tonumber(e)
end
c = c + d
h = h + tonumber(ARGV[5])
l = l + tonumber(ARGV[6])
if (s - d > 0) ~= (s > 0) then
  if s > 0 then n = n + 1 else n = n - 1 end
end
if c == 0 and h == 0 and l == 0 and n == 0 then
  redis.call('HDEL', KEYS[1], g)
else
  redis.call('HSET', KEYS[1], g, string.format('%d %d %d %d', c, h, l, n))
end
return s
`;

/**
 * A pubkey's followers are kept as logs of changes (keys.ts `fl`, `fn`, `fs`): strings of records
 * of 33 bytes, a signed byte (the change, +1 or -1, or a follower's net change once folded) then
 * the follower's 32 bytes, after a header of 33 bytes (a zero byte, then `<followers> <records at
 * the last fold>` in text, padded; the followers count only in the one log of depth 0). A follow is
 * a record appended, not a sorted-set insert: a ZADD into a listpack scans it, and those scans were
 * most of Redis' time in a fresh import of follow lists (BENCHMARKS.md). A follower
 * follows while its changes add up to 1 or more; a log is folded (each follower's changes added up,
 * those at 0 dropped) once it holds twice the records it held after its last fold, and at least
 * twice FOLLOW_BUCKET_SIZE, so the records of a follower cost amortised O(1) and a log stays at most
 * about twice its followers. Pages read logs whole and sort them (FOLLOWERS_PAGE).
 *
 * A crowded bucket (more than CROWDED followers once folded) is a sorted set instead, its followers
 * all scored 0 (so that BYLEX reads them in byte order), and beside it a hash \`<key>x\` of the nets
 * of those whose changes add up to anything but 1 or 0 (a moment's 2 or -1): buckets go by the
 * followers' first hex digits, which anyone can grind, and a page of a log costs the whole log, of
 * a sorted set only the page (O(log n) a follower to write, a range to read). CROWDED is four times
 * FOLLOW_BUCKET_SIZE: random pubkeys never crowd a bucket below depth 4 (a bucket splits at that
 * size on average); 4,096 ground keys of one 3-digit prefix did (found by review: 112 ms of
 * Redis a page of 10 for 100,000 followers in one log).
 */
const FOLLOWER_LOGS = `
-- A follower's bucket at a depth (its first depth hex digits, as a number), and that bucket's key.
local DIVISOR = { [0] = 65536, 4096, 256, 16, 1 }
local function bucketAt(follower, depth)
  local high, low = string.byte(follower, 1, 2)
  return math.floor((high * 256 + low) / DIVISOR[depth])
end
-- A bucket's key; with \`digits\` (a table), its hex digits are kept there by depth and bucket, made
-- once per script run (FOLLOW: string.format was about a tenth of its time at depth 2, where a
-- batch appends to most of a popular pubkey's 256 buckets; a page names each bucket once).
local function bucketKey(prefix, bucket, depth, digits)
  if digits == nil then return prefix .. string.format('%0' .. depth .. 'x', bucket) end
  local atDepth = digits[depth]
  if atDepth == nil then
    atDepth = {}
    digits[depth] = atDepth
  end
  local hex = atDepth[bucket]
  if hex == nil then
    hex = string.format('%0' .. depth .. 'x', bucket)
    atDepth[bucket] = hex
  end
  return prefix .. hex
end
-- The digits FOLLOW keeps for the rest of its script run (FOLLOW_MANY names the same buckets for many pubkeys).
local DIGITS = {}
local HEADER = 33
-- Followers of a bucket past which it is a sorted set: four times the bucket size (set by follow()).
local CROWDED = 1536
-- A log's header: its count (0 for a bucket), how many records it held after its last fold, and
-- for a bucket whether a record that takes a follower away (a negative change) came since (1) or
-- not (0): a log of additions only has nothing a fold would drop. Without the third figure (a
-- depth-0 log, or a bucket of an earlier version) it is read as 1.
local function header(count, folded, removals)
  local figures = removals and string.format('%d %d %d', count, folded, removals) or string.format('%d %d', count, folded)
  return string.char(0) .. string.format('%-32s', figures)
end
local function readHeader(log)
  local count, folded, removals = string.match(string.sub(log, 2, HEADER), '^(%-?%d+) (%d+) ?(%d*)')
  return tonumber(count), tonumber(folded), tonumber(removals) or 1
end
-- Adds up the changes of the records of a string from byte 'from' into nets (followers in the
-- order first met in seen).
local function gather(records, from, nets, seen)
  for i = from, #records, 33 do
    local change = string.byte(records, i)
    if change > 127 then change = change - 256 end
    local follower = string.sub(records, i + 1, i + 32)
    local net = nets[follower]
    if net == nil then
      seen[#seen + 1] = follower
      net = 0
    end
    nets[follower] = net + change
  end
end
-- The same from a crowded bucket: its followers (1 each) and the nets that are not 1.
local function gatherSet(key, nets, seen)
  local function add(follower, change)
    if nets[follower] == nil then
      seen[#seen + 1] = follower
      nets[follower] = 0
    end
    nets[follower] = nets[follower] + change
  end
  local odd = {}
  local fields = redis.call('HGETALL', key .. 'x')
  for i = 1, #fields, 2 do odd[fields[i]] = tonumber(fields[i + 1]) end
  for _, follower in ipairs(redis.call('ZRANGE', key, 0, -1)) do
    if odd[follower] == nil then add(follower, 1) end
  end
  for follower, net in pairs(odd) do add(follower, net) end
end
-- A change to one follower of a crowded bucket.
local function changeInSet(key, follower, change)
  local net = tonumber(redis.call('HGET', key .. 'x', follower))
  if net == nil then
    if redis.call('ZSCORE', key, follower) then net = 1 else net = 0 end
  end
  local after = net + change
  if after >= 1 then redis.call('ZADD', key, 0, follower) else redis.call('ZREM', key, follower) end
  if after == 0 or after == 1 then
    redis.call('HDEL', key .. 'x', follower)
  else
    redis.call('HSET', key .. 'x', follower, string.format('%d', after))
  end
end
-- The list of a bucket in lists, made (and the bucket added to order) the first time it is asked for.
local function bucketList(lists, order, bucket)
  local list = lists[bucket]
  if list == nil then
    list = {}
    lists[bucket] = list
    order[#order + 1] = bucket
  end
  return list
end
-- A follower's records for its net change (one, unless past a signed byte), into out.
local function emit(out, follower, net)
  while net ~= 0 do
    local step = math.max(-127, math.min(127, net))
    out[#out + 1] = string.char(step % 256) .. follower
    net = net - step
  end
end
-- Writes followers (nets, seen as gather leaves them) as a folded log, its header saying count (0
-- for a bucket), and for a bucket whether a net is negative; gone when it holds and counts nothing.
local function writeLog(key, count, nets, seen, bucket)
  local out, removals = {}, 0
  for _, follower in ipairs(seen) do
    local net = nets[follower]
    if net < 0 then removals = 1 end
    emit(out, follower, net)
  end
  if #out == 0 and count == 0 then
    redis.call('DEL', key)
  else
    redis.call('SET', key, header(count, #out, bucket and removals or nil) .. table.concat(out))
  end
end
-- Writes a bucket's followers to its key, which holds a log or nothing: a log, or past CROWDED
-- followers a sorted set.
local function writeBucket(key, nets, seen)
  local held = 0
  for _, follower in ipairs(seen) do
    if nets[follower] ~= 0 then held = held + 1 end
  end
  if held <= CROWDED then return writeLog(key, 0, nets, seen, true) end
  redis.call('DEL', key)
  local members = {}
  local function flush()
    if #members > 0 then redis.call('ZADD', key, unpack(members)) end
    members = {}
  end
  for _, follower in ipairs(seen) do
    local net = nets[follower]
    if net >= 1 then
      members[#members + 1] = 0
      members[#members + 1] = follower
      if #members >= 1000 then flush() end
    end
    if net ~= 0 and net ~= 1 then redis.call('HSET', key .. 'x', follower, string.format('%d', net)) end
  end
  flush()
end
`;

/**
 * Follow lists naming a pubkey, added or taken away (store/follow-index.ts FollowWrites: one call
 * per followed pubkey per batch, or its part of a FOLLOW_MANY call): KEYS[1] its followers' log while they are few (keys.ts `fl`),
 * KEYS[2] its depth and count once they are many (`fn`, `<depth> <followers>`); ARGV[1] records of
 * 33 bytes, a change (a signed byte: 1 or -1) then the follower's 32 bytes, packed in one argument
 * (an argument per follower cost the client more than the script); ARGV[2] the bucket logs' key
 * prefix (`fs:{…}:`); ARGV[3] FOLLOW_BUCKET_SIZE. The count is the sum of the changes: exact once
 * every change of every list has landed, in whatever order two writers apply them.
 *
 * Few followers (depth 0): one log. Past FOLLOW_BUCKET_SIZE × 16^depth followers, they move to 16
 * times as many buckets (depth 4 at most), and below a 64th of that back to fewer, the keys
 * `fs:{…}:<the follower's first depth hex digits>`; bucket order is pubkey order, so pages read
 * them one after the other. Each bucket the records fall in is written once per call (how: below).
 * Returns the change in its followers (for search ranks).
 */
const FOLLOW_FUNCTION = `${FOLLOWER_LOGS}
-- One followed pubkey's records: logKey, metaKey as KEYS[1], KEYS[2] of FOLLOW; records, prefix, size
-- and net (the records' sum, sent beside them by the client: flushFollows) as its ARGV.
local function follow(logKey, metaKey, records, prefix, size, net)
  CROWDED = 4 * size
  -- Fewer followers than this: the one log is read and written whole (below).
  local SMALL_LOG = 16
  local depth, count = 0, 0
  local meta = redis.call('GET', metaKey)
  if meta then
    local d, n = string.match(meta, '^(%d+) (%-?%d+)$')
    depth, count = tonumber(d), tonumber(n)
  end
  local function keyOf(bucket)
    if depth == 0 then return logKey end
    return bucketKey(prefix, bucket, depth, DIGITS)
  end
  -- At depth 0 the count is in the one log's header.
  local head, folded = '', 0
  local function readHead()
    head = redis.call('GETRANGE', logKey, 0, HEADER - 1)
    if head ~= '' then count, folded = readHeader(head) end
  end
  if depth == 0 then readHead() end
  -- Past the depth's room every follower moves to 16 times as many buckets, or more (rare: at 384,
  -- 6,144, 98,304 and 1,572,864 followers at FOLLOW_BUCKET_SIZE 384; the last some seconds of one
  -- script, once);
  -- below a 64th of it (most gone: a follow-spam wave deleted) back to fewer, so that a page never
  -- walks thousands of empty buckets. The logs are folded as they move. Moving to more buckets, the
  -- followers held move before the records are applied, which go straight to the new depth (moved
  -- after, a popular pubkey's first batch moved all of its hundreds of new followers again: half
  -- the records of a fresh import went through a move). Moving to fewer, after: the records'
  -- removals are folded away in the move.
  local target = depth
  while target < 4 and count + net > size * 16 ^ target do target = target + 1 end
  while target > 0 and count + net < size * 16 ^ (target - 1) / 4 do target = target - 1 end
  -- Followers moved to buckets of the new depth, by bucket, and the buckets in the order met:
  -- written below, with the bucket's records in one SET where records come for it.
  local movedNets, movedTo, movedOrder = {}, {}, {}
  -- Or, moved from logs that only ever gained followers (each header says no removal came: a
  -- fresh import), their records as they were, by bucket: nothing to add up or drop, so each
  -- record is only read for its bucket and copied (adding up every follower was most of a move's
  -- time, and a fresh import of 10,000 lists moved every pubkey it followed, twice).
  local movedRaw = {}
  local function moveRaw(target)
    local logs = {}
    for b = 0, 16 ^ depth - 1 do
      local key = keyOf(b)
      local kind = redis.call('TYPE', key)['ok']
      if kind == 'zset' then return false end
      if kind == 'string' then
        local log = redis.call('GET', key)
        local _, _, removals = readHeader(log)
        if removals ~= 0 then return false end
        logs[#logs + 1] = log
      end
    end
    for b = 0, 16 ^ depth - 1 do redis.call('DEL', keyOf(b)) end
    depth = target
    local divisor = DIVISOR[depth]
    for _, log in ipairs(logs) do
      for i = HEADER + 1, #log, 33 do
        local high, low = string.byte(log, i + 1, i + 2)
        local list = bucketList(movedRaw, movedOrder, math.floor((high * 256 + low) / divisor))
        list[#list + 1] = string.sub(log, i, i + 32)
      end
    end
    return true
  end
  -- A bucket's raw records written as the other moves write their followers: past CROWDED, added
  -- up and written by writeBucket (a sorted set if still past it).
  local function rawCrowded(key, raw)
    local nets, seen = {}, {}
    gather(table.concat(raw), 1, nets, seen)
    writeBucket(key, nets, seen)
  end
  local function moveTo(target)
    if target > depth and depth > 0 and moveRaw(target) then return end
    local nets, seen = {}, {}
    for b = 0, 16 ^ depth - 1 do
      local key = keyOf(b)
      local kind = redis.call('TYPE', key)['ok']
      if kind == 'zset' then
        gatherSet(key, nets, seen)
        redis.call('DEL', key, key .. 'x')
      elseif kind == 'string' then
        gather(redis.call('GET', key), HEADER + 1, nets, seen)
        redis.call('DEL', key)
      end
    end
    depth = target
    -- Each new bucket's followers (those not at 0), in the order met; their nets stay in nets.
    local into, used = {}, {}
    for _, follower in ipairs(seen) do
      if nets[follower] ~= 0 then
        local list = bucketList(into, used, bucketAt(follower, depth))
        list[#list + 1] = follower
      end
    end
    if depth == 0 then
      writeLog(logKey, count, nets, into[0] or {})
      redis.call('DEL', metaKey)
      readHead()
    else
      movedNets, movedTo, movedOrder = nets, into, used
    end
  end
  if target > depth then moveTo(target) end
  -- The records by bucket (at depth 0, all of them in the one log) and the buckets given a negative
  -- change (a byte over 127; their sum is known, above). The client sends records by follower (FollowWrites.byFollowed), so a
  -- bucket's are one run: one substring a run, not one a record (each string a script makes costs a
  -- hash of all its bytes). Records in any other order are applied the same, in more runs.
  -- A bucket's part is its one run (a string), or its runs (a table) when records came out of order.
  local order, parts, removing = {}, {}, {}
  if depth > 0 then
    local divisor = DIVISOR[depth]
    -- The run's bucket and the range of first two bytes it covers: a record inside it costs two
    -- comparisons, no division.
    local runBucket, runFrom, runLow, runHigh = nil, 1, 1, 0
    local function endRun(to)
      local run = string.sub(records, runFrom, to)
      local part = parts[runBucket]
      if part == nil then
        parts[runBucket] = run
        order[#order + 1] = runBucket
      elseif type(part) == 'string' then
        parts[runBucket] = { part, run }
      else
        part[#part + 1] = run
      end
    end
    for i = 1, #records, 33 do
      local change, high, low = string.byte(records, i, i + 2)
      local at = high * 256 + low
      if at < runLow or at >= runHigh then
        if runBucket ~= nil then endRun(i - 1) end
        runBucket, runFrom = math.floor(at / divisor), i
        runLow = runBucket * divisor
        runHigh = runLow + divisor
      end
      if change > 127 then removing[runBucket] = 1 end
    end
    if runBucket ~= nil then endRun(#records) end
  end
  -- The one log folded: each follower's changes added up, those at 0 dropped; gone when nothing is left.
  local function foldOne(log, added)
    local nets, seen = {}, {}
    gather(log, HEADER + 1, nets, seen)
    gather(added, 1, nets, seen)
    writeLog(logKey, count, nets, seen)
  end
  if depth == 0 then
    -- The one log, its count in its header. Few followers: read and written whole (a string SET is
    -- as long as it holds; APPEND leaves as much again unused, a lot beside a few records). More:
    -- appended to, and its header written over (a long string through the script costs a hash of
    -- every byte: Redis' Lua hashes whole strings).
    local before = count
    count = count + net
    if head == '' and count ~= 0 then
      redis.call('SET', logKey, header(count, 0) .. records)
    elseif head == '' or before < SMALL_LOG or count == 0 then
      local log = redis.call('GET', logKey) or ''
      local held = (math.max(0, #log - HEADER) + #records) / 33
      if held > 2 * math.max(folded, size) or count == 0 then
        foldOne(log, records)
      else
        redis.call('SET', logKey, header(count, folded) .. string.sub(log, HEADER + 1) .. records)
      end
    else
      local length = redis.call('APPEND', logKey, records)
      if (length - HEADER) / 33 > 2 * math.max(folded, size) then
        foldOne(redis.call('GET', logKey), '')
      else
        redis.call('SETRANGE', logKey, 0, header(count, folded))
      end
    end
  else
    count = count + net
    for _, bucket in ipairs(order) do
      local key = keyOf(bucket)
      local part = parts[bucket]
      local added = type(part) == 'string' and part or table.concat(part)
      local removes = removing[bucket] or 0
      -- Followers just moved here: written with these records in one SET (an APPEND after their
      -- own SET would leave as much again unused), unless they are a crowded bucket's.
      local moved, raw = movedTo[bucket], movedRaw[bucket]
      movedTo[bucket], movedRaw[bucket] = nil, nil
      if moved ~= nil and #moved > CROWDED then
        writeBucket(key, movedNets, moved)
        moved = nil
      end
      if raw ~= nil and #raw > CROWDED then
        rawCrowded(key, raw)
        raw = nil
      end
      local length, movedRecords
      if raw ~= nil then
        movedRecords = #raw
        redis.call('SET', key, header(0, movedRecords, removes) .. table.concat(raw) .. added)
        length = HEADER + 33 * movedRecords + #added
      elseif moved ~= nil then
        local out = {}
        for _, follower in ipairs(moved) do
          local movedNet = movedNets[follower]
          if movedNet < 0 then removes = 1 end
          emit(out, follower, movedNet)
        end
        movedRecords = #out
        redis.call('SET', key, header(0, movedRecords, removes) .. table.concat(out) .. added)
        length = HEADER + 33 * movedRecords + #added
      else
        -- A bucket's log: appended to (one command, nothing copied through the script); its header
        -- read only when it must say a removal came, or once the log may need a fold. A crowded
        -- bucket's sorted set refuses APPEND: each follower's change is added to its score there.
        length = redis.pcall('APPEND', key, added)
      end
      if type(length) == 'table' then
        for i = 1, #added, 33 do
          local change = string.byte(added, i)
          if change > 127 then change = change - 256 end
          changeInSet(key, string.sub(added, i + 1, i + 32), change)
        end
        -- The set's last member gone (Redis deletes an empty set): the followers its hash still owes
        -- a removal become the bucket's log (else the next APPEND started a log without them, and
        -- the hash was never read again), or the bucket is gone.
        if redis.call('EXISTS', key) == 0 then
          local nets, seen = {}, {}
          gatherSet(key, nets, seen)
          redis.call('DEL', key .. 'x')
          writeLog(key, 0, nets, seen, true)
        end
      else
        local folded, removals, _
        if movedRecords ~= nil then
          folded, removals = movedRecords, removes
        elseif length == #added then
          folded, removals = 0, removes
          redis.call('SET', key, header(0, folded, removals) .. added)
          length = length + HEADER
        elseif removes == 1 or (length - HEADER) / 33 > 2 * size then
          _, folded, removals = readHeader(redis.call('GETRANGE', key, 0, HEADER - 1))
          if removes > removals then
            removals = 1
            redis.call('SETRANGE', key, 0, header(0, folded, removals))
          end
        end
        local held = (length - HEADER) / 33
        if held > 2 * size and held > 2 * math.max(folded, size) then
          if removals == 0 and held <= CROWDED then
            -- Additions only (a fresh import): a fold would find nothing to drop. Its mark moves on,
            -- so that the next look is at twice as many.
            redis.call('SETRANGE', key, 0, header(0, held, 0))
          else
            local nets, seen = {}, {}
            gather(redis.call('GET', key), HEADER + 1, nets, seen)
            writeBucket(key, nets, seen)
          end
        end
      end
    end
  end
  if target < depth then moveTo(target) end
  -- Buckets that followers moved to and no record came for.
  for _, bucket in ipairs(movedOrder) do
    if movedTo[bucket] ~= nil then writeBucket(keyOf(bucket), movedNets, movedTo[bucket]) end
    local raw = movedRaw[bucket]
    if raw ~= nil and #raw > CROWDED then
      rawCrowded(keyOf(bucket), raw)
    elseif raw ~= nil then
      redis.call('SET', keyOf(bucket), header(0, #raw, 0) .. table.concat(raw))
    end
  end
  if depth > 0 then redis.call('SET', metaKey, string.format('%d %d', depth, count)) end
  return net
end
`;

export const FOLLOW_SCRIPT = `${FOLLOW_FUNCTION}
return follow(KEYS[1], KEYS[2], ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]))
`;

/**
 * FOLLOW for many followed pubkeys at once, on one Redis (not a cluster: their keys are in many
 * slots): KEYS two per pubkey (FOLLOW's), ARGV[1] FOLLOW_BUCKET_SIZE, then three per pubkey (its
 * records, its bucket logs' key prefix, their sum). Returns each pubkey's FOLLOW answer, or the
 * error of one whose script failed (the others applied, as separate FOLLOW calls would be).
 */
export const FOLLOW_MANY_SCRIPT = `${FOLLOW_FUNCTION}
local size, out = tonumber(ARGV[1]), {}
for i = 1, #KEYS / 2 do
  local ok, net = pcall(follow, KEYS[2 * i - 1], KEYS[2 * i], ARGV[3 * i - 1], ARGV[3 * i], size, tonumber(ARGV[3 * i + 1]))
  if ok then
    out[i] = net
  else
    out[i] = redis.error_reply(type(net) == 'table' and tostring(net.err) or tostring(net))
  end
end
return out
`;

/**
 * Sets one follower's change at a followed pubkey to what its list now says (keys as FOLLOW's):
 * ARGV[1] the follower's 32 bytes, ARGV[2] 1 (its latest list names the pubkey) or 0, ARGV[3] the
 * bucket logs' key prefix, ARGV[4] FOLLOW_BUCKET_SIZE. Reads the follower's changes in its log or
 * bucket, and applies (FOLLOW) the one record that brings them to ARGV[2]: what a transition
 * whose reply was lost left applied in part, or twice, is mended (redis-event-store.ts heal), and
 * sent again it changes nothing. Returns the change in its followers.
 */
export const FOLLOW_SET_SCRIPT = `${FOLLOW_FUNCTION}
local follower, wanted = ARGV[1], tonumber(ARGV[2])
local depth = 0
local meta = redis.call('GET', KEYS[2])
if meta then depth = tonumber(string.match(meta, '^(%d+)')) end
local key = KEYS[1]
if depth > 0 then key = bucketKey(ARGV[3], bucketAt(follower, depth), depth) end
local held = 0
local kind = redis.call('TYPE', key)['ok']
if kind == 'zset' then
  held = tonumber(redis.call('HGET', key .. 'x', follower)) or (redis.call('ZSCORE', key, follower) and 1 or 0)
elseif kind == 'string' then
  local log = redis.call('GET', key)
  local from = HEADER + 1
  while true do
    local at = string.find(log, follower, from + 1, true)
    if at == nil then break end
    -- A match must be a record's follower (its change byte before it), not bytes across two records.
    if (at - HEADER - 2) % 33 == 0 then
      local change = string.byte(log, at - 1)
      if change > 127 then change = change - 256 end
      held = held + change
      from = at + 32
    else
      from = at
    end
  end
end
local change = wanted - held
if change == 0 then return 0 end
local records = {}
emit(records, follower, change)
return follow(KEYS[1], KEYS[2], table.concat(records), ARGV[3], tonumber(ARGV[4]), change)
`;

/**
 * A pubkey's followers (keys as FOLLOW's): kept with the depth once they are many, else in the
 * header of their one log; one script (read apart, a move into buckets between two reads made it 0).
 */
export const FOLLOWER_COUNT_SCRIPT = `
local meta = redis.call('GET', KEYS[2])
if meta then return tonumber(string.match(meta, ' (%-?%d+)$')) end
local head = redis.call('GETRANGE', KEYS[1], 1, 32)
if head == '' then return 0 end
return tonumber(string.match(head, '^(%-?%d+)'))
`;

/**
 * A page of a pubkey's followers (keys as FOLLOW's): ARGV[1] the bucket logs' key prefix, ARGV[2]
 * the 32 bytes to read after (empty: from the start), ARGV[3] how many. Reads the buckets in order
 * from the one \`after\` falls in until they hold the page: a log whole, a crowded bucket's sorted
 * set as far as the page needs. Returns their followers after \`after\`, unsorted (the caller sorts
 * them and keeps the first: every follower of a log read is there, the first of a sorted set read,
 * and bucket order is pubkey order). One round trip.
 */
export const FOLLOWERS_PAGE_SCRIPT = `${FOLLOWER_LOGS}
local prefix, after, first = ARGV[1], ARGV[2], tonumber(ARGV[3])
-- Byte order (Lua's < on strings is strcoll's, and Redis sets the locale's).
local function before(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local out = {}
-- A crowded bucket: as many of its followers after from, in byte order, as the page still needs.
local function readSet(key, from)
  local start = '-'
  if from ~= '' then start = '(' .. from end
  for _, member in ipairs(redis.call('ZRANGE', key, start, '+', 'BYLEX', 'LIMIT', 0, first - #out)) do out[#out + 1] = member end
end
local function read(key, from)
  local kind = redis.call('TYPE', key)['ok']
  if kind == 'zset' then return readSet(key, from) end
  if kind ~= 'string' then return end
  local nets, seen = {}, {}
  gather(redis.call('GET', key), HEADER + 1, nets, seen)
  for _, follower in ipairs(seen) do
    if nets[follower] > 0 and (from == '' or before(from, follower)) then out[#out + 1] = follower end
  end
end
local meta = redis.call('GET', KEYS[2])
if not meta then
  read(KEYS[1], after)
  return out
end
local depth = tonumber(string.match(meta, '^(%d+)'))
local b = 0
if after ~= '' then b = bucketAt(after, depth) end
local from = after
while b < 16 ^ depth and #out < first do
  read(bucketKey(prefix, b, depth), from)
  from = ''
  b = b + 1
end
return out
`;

/** How many pubkeys a list follows, added or taken away (ARGV[1]): KEYS[1] `fg`, gone at 0. */
export const FOLLOWING_SCRIPT = `
local after = redis.call('INCRBY', KEYS[1], ARGV[1])
if after == 0 then redis.call('DEL', KEYS[1]) end
return after
`;

/**
 * An event added to (ARGV[1] 1) or taken from (-1) its author's notes of its kind: KEYS[1] `n`, the
 * list, KEYS[2] `nd`, its tombstones; ARGV[2] its member. As a reply in RELATE: a removal leaves a
 * tombstone for good, and no addition (late, or another writer's replay) lists the member past it.
 */
export const NOTE_SCRIPT = `
if tonumber(ARGV[1]) > 0 then
  if redis.call('SISMEMBER', KEYS[2], ARGV[2]) == 0 then redis.call('ZADD', KEYS[1], 0, ARGV[2]) end
else
  redis.call('SADD', KEYS[2], ARGV[2])
  redis.call('ZREM', KEYS[1], ARGV[2])
end
return 1
`;

/**
 * An event's member of its author's list written again where it is missing (a `duplicate` put: the
 * writer that stored the event may have stopped before it listed it): KEYS[1] `n`, KEYS[2] `nd`,
 * ARGV[1] the member. Not when `nd` holds its removal (the event went). Returns 1 when
 * it added the member.
 */
export const ENSURE_NOTE_SCRIPT = `
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then return 0 end
return redis.call('ZADD', KEYS[1], 'NX', 0, ARGV[1])
`;

/**
 * Shared by the search scripts (store/search-index.ts): a record of the words index, `<created_at>
 * <id> <words separated by spaces>`, read back; whether one place is newer than another as the
 * store decides replaceable events (NIP-01: created_at, then the lowest id); a record's words; their
 * prefixes of 1 and 3 characters (nostr/profile-search.ts RANKED_PREFIX_LENGTHS; UTF-8 sequences).
 */
const SEARCH_HELPERS = `
local function parse(record)
  local t, id, words = string.match(record, '^(%d+) (%x+) ?(.*)$')
  return tonumber(t), id, words
end
local function newer(t1, id1, t2, id2) return t1 > t2 or (t1 == t2 and id1 < id2) end
local function split(words)
  local list = {}
  for word in string.gmatch(words, '[^ ]+') do list[#list + 1] = word end
  return list
end
local function prefixes(list)
  local set = {}
  for _, word in ipairs(list) do
    local prefix, length = '', 0
    for ch in string.gmatch(word, '[\\1-\\127\\194-\\244][\\128-\\191]*') do
      prefix, length = prefix .. ch, length + 1
      if length ~= 2 then set[prefix] = true end
      if length == 3 then break end
    end
  end
  return set
end
`;

/**
 * A profile added to (ARGV[3] 1) or taken from (-1) the search index: KEYS[1] `w` (pubkey → record),
 * KEYS[2] `d` (pubkey → a removal whose addition has not come), KEYS[3] `x` (the words in lexical
 * order, `<word> <pubkey>`), KEYS[4] `c` (pubkey → followers); ARGV[1] the prefix of the rank keys
 * (`k:` + a prefix of a word: pubkeys scored by minus their followers), ARGV[2] the 32-byte pubkey,
 * ARGV[4] created_at, ARGV[5] the id, ARGV[6] its words. Two writers may apply a replacement's
 * removal and addition in either order: the newest place holds, and a removal that comes first
 * leaves a mark that its addition takes instead of adding. A removed profile leaves its place
 * without words in `w`, so that each version is added at most once.
 */
export const SEARCH_PROFILE_SCRIPT = `${SEARCH_HELPERS}
local w, d, x, c = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local kp, pk, delta, t, id, words = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5], ARGV[6]
local held = redis.call('HGET', w, pk)
local ht, hid, hwords
if held then ht, hid, hwords = parse(held) end
local function index(before, after)
  local followers = tonumber(redis.call('HGET', c, pk) or '0')
  local had, has = {}, {}
  for _, word in ipairs(before) do had[word] = true end
  for _, word in ipairs(after) do has[word] = true end
  for word in pairs(had) do if not has[word] then redis.call('ZREM', x, word .. ' ' .. pk) end end
  for word in pairs(has) do if not had[word] then redis.call('ZADD', x, 0, word .. ' ' .. pk) end end
  local pb, pa = prefixes(before), prefixes(after)
  for prefix in pairs(pb) do if not pa[prefix] then redis.call('ZREM', kp .. prefix, pk) end end
  for prefix in pairs(pa) do redis.call('ZADD', kp .. prefix, -followers, pk) end
end
if delta > 0 then
  local mark = redis.call('HGET', d, pk)
  if mark then
    local mt, mid = parse(mark)
    if mt == t and mid == id then
      redis.call('HDEL', d, pk)
      return 0
    end
    if not newer(t, id, mt, mid) then return 0 end
    redis.call('HDEL', d, pk)
  end
  if held and not newer(t, id, ht, hid) then return 0 end
  index(held and split(hwords) or {}, split(words))
  -- created_at as it came (ARGV[4]): Lua writes a number past 10^14 as 1e+14, which parse refuses.
  redis.call('HSET', w, pk, ARGV[4] .. ' ' .. id .. ' ' .. words)
elseif held and ht == t and hid == id then
  index(split(hwords), {})
  -- Kept as the version's tombstone ("<created_at> <id>", no words): its addition sent again (a
  -- heal after a lost reply, redis-event-store.ts) is then not newer, and adds nothing.
  redis.call('HSET', w, pk, ARGV[4] .. ' ' .. id)
elseif not held or newer(t, id, ht, hid) then
  local mark = redis.call('HGET', d, pk)
  local newest = true
  if mark then
    local mt, mid = parse(mark)
    newest = newer(t, id, mt, mid)
  end
  if newest then redis.call('HSET', d, pk, ARGV[4] .. ' ' .. id) end
end
return 1
`;

/**
 * Followers gained or lost by pubkeys, for ranking (store/search-index.ts): KEYS[1] `w`, KEYS[2]
 * `c`; ARGV[1] the prefix of the rank keys, ARGV[2] records of 36 bytes, a pubkey then its change
 * as a big-endian signed 32-bit number. Every pubkey followed is counted (its profile may come
 * later); those with a profile move in the rank order of each prefix of their words.
 */
export const SEARCH_FOLLOWERS_SCRIPT = `${SEARCH_HELPERS}
local w, c = KEYS[1], KEYS[2]
local kp, records = ARGV[1], ARGV[2]
for i = 1, #records, 36 do
  local pk = string.sub(records, i, i + 31)
  local change = struct.unpack('>i4', string.sub(records, i + 32, i + 35))
  local after = redis.call('HINCRBY', c, pk, change)
  if after == 0 then redis.call('HDEL', c, pk) end
  local held = redis.call('HGET', w, pk)
  if held then
    local _, _, words = parse(held)
    for prefix in pairs(prefixes(split(words))) do redis.call('ZADD', kp .. prefix, -after, pk) end
  end
end
return 1
`;

/**
 * searchProfiles (store/search-index.ts): KEYS[1] `w`, KEYS[2] `x`, KEYS[3] `c`; ARGV[1] the prefix
 * of the rank keys, ARGV[2] how many, ARGV[3] LEX_RANGE_LIMIT, ARGV[4] RANK_WALK_LIMIT, ARGV[5…]
 * the query's words. Takes the word with the fewest entries: at most the limit, it reads them all,
 * keeps the pubkeys whose words match every query word and sorts them by followers, then pubkey;
 * more, it walks the smallest rank order among the query words' prefixes (a word's first 3
 * characters, else its first; already followers, then pubkey) until it has enough or has looked at RANK_WALK_LIMIT
 * pubkeys. Returns the 32-byte pubkeys.
 */
export const SEARCH_SCRIPT = `${SEARCH_HELPERS}
local w, x, c = KEYS[1], KEYS[2], KEYS[3]
local kp, first, limit, walk = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local asked = {}
for i = 5, #ARGV do asked[#asked + 1] = ARGV[i] end
local function matches(pk)
  local record = redis.call('HGET', w, pk)
  if not record then return false end
  local _, _, words = parse(record)
  local list = split(words)
  for _, q in ipairs(asked) do
    local found = false
    for _, word in ipairs(list) do
      if string.sub(word, 1, #q) == q then
        found = true
        break
      end
    end
    if not found then return false end
  end
  return true
end
local best, size
for _, q in ipairs(asked) do
  local n = redis.call('ZLEXCOUNT', x, '[' .. q, '(' .. q .. '\\255')
  if size == nil or n < size then best, size = q, n end
end
local out = {}
if size == nil or size == 0 then return out end
if size <= limit then
  local seen, found = {}, {}
  for _, member in ipairs(redis.call('ZRANGE', x, '[' .. best, '(' .. best .. '\\255', 'BYLEX')) do
    local pk = string.sub(member, -32)
    if not seen[pk] then
      seen[pk] = true
      if matches(pk) then found[#found + 1] = { pk, tonumber(redis.call('HGET', c, pk) or '0') } end
    end
  end
  -- Pubkeys by their bytes (Lua's < on strings follows the server's locale).
  table.sort(found, function(a, b)
    if a[2] ~= b[2] then return a[2] > b[2] end
    for i = 1, 32 do
      local p, q = string.byte(a[1], i), string.byte(b[1], i)
      if p ~= q then return p < q end
    end
    return false
  end)
  for i = 1, math.min(first, #found) do out[i] = found[i][1] end
  return out
end
-- The smallest rank order among the query words' prefixes (each word's first 3 characters).
local key, card
for _, q in ipairs(asked) do
  local prefix = ''
  for p in pairs(prefixes({ q })) do if #p > #prefix then prefix = p end end
  local n = redis.call('ZCARD', kp .. prefix)
  if card == nil or n < card then key, card = kp .. prefix, n end
end
local offset = 0
while #out < first and offset < walk do
  local chunk = redis.call('ZRANGE', key, offset, math.min(offset + 255, walk - 1))
  if #chunk == 0 then break end
  for _, pk in ipairs(chunk) do
    if matches(pk) then
      out[#out + 1] = pk
      if #out == first then break end
    end
  end
  offset = offset + 256
end
return out
`;

/** INBOUND's rule as a function: one record (ARGV[2], ARGV[3] as below) of one target's key. */
const INBOUND_FUNCTION = `
local function inbound(key, d, id, record)
  local held = redis.call('HGET', key, id)
  if d == 0 then
    if held ~= record then return 0 end
    redis.call('HDEL', key, id)
    return 1
  end
  if d > 0 then
    if held then return 0 end
    redis.call('HSET', key, id, record)
    return 1
  end
  redis.call('HSET', key, id, '-' .. record)
  if held and string.sub(held, 1, 1) ~= '-' then return 1 end
  return 0
end
`;

/**
 * One event's record in one target's inbound notifications (store/notification-index.ts): KEYS[1]
 * `ni:{<target>}`; ARGV[1] 1 (add), -1 (take away) or 0 (drop the record once delivered: only
 * while it is still ARGV[3], not a removal's since); ARGV[2] the event's id (32 bytes); ARGV[3]
 * the record (`<created_at> <letters> <author prefix>`). A removal leaves `-<record>` for good, so
 * that an addition arriving after it changes nothing, and the target's own removal still takes its
 * reasons back (notification-index.ts readInboundValue); an addition sent again changes nothing either.
 * Returns 1 when the record changed, else 0.
 */
export const INBOUND_SCRIPT = `${INBOUND_FUNCTION}
return inbound(KEYS[1], tonumber(ARGV[1]), ARGV[2], ARGV[3])
`;

/** INBOUND over many targets' keys at once (one Redis only: the keys are in many slots). ARGV: (delta, id, record) per key. */
export const INBOUND_MANY_SCRIPT = `${INBOUND_FUNCTION}
for i = 1, #KEYS do inbound(KEYS[i], tonumber(ARGV[3 * i - 2]), ARGV[3 * i - 1], ARGV[3 * i]) end
return #KEYS
`;

/** Every target's inbound records (HGETALL each key; one Redis only). */
export const INBOUND_READ_MANY_SCRIPT = `
local out = {}
for i = 1, #KEYS do out[i] = redis.call('HGETALL', KEYS[i]) end
return out
`;

/**
 * A recipient's page order (keys.ts `nz`, `nb`, `nk`) as sorted sets of at most ORDER_BUCKET members
 * each, so that each stays a listpack (Redis' compact encoding: about 45 bytes a member, where one
 * large sorted set costs about 136, its skiplist and hash table; BENCHMARKS.md). `nz:{T}` is the
 * first bucket and all of a recipient's order until it passes ORDER_BUCKET; then the upper half of
 * a full bucket moves to a new one, `nz:{T}:<letter><8 bytes of its first member's id, hex>`, whose
 * first member (its low) goes to the directory `nb:{T}` (a sorted set, by bytes); where that name is
 * in use (ids chosen to share the 8 bytes), the split moves up to the next member whose is not. A member belongs
 * to the bucket of the greatest low at or below it, else to the first. `nk:{T}` holds each letter's
 * count while there is a directory (a count without a time bound reads it). An emptied bucket goes
 * (an emptied first bucket takes the next one's place), and with the last the directory and counts;
 * a bucket under a quarter full joins the one before it where both fit in half a bucket.
 * An order written before buckets, past 4 × ORDER_BUCKET members, stays one set (read and written
 * the same way) until \`relations rebuild\` writes it again.
 */
export const ORDER_FUNCTIONS = `
local ORDER_BUCKET = 128
local function directoryOf(order) return string.sub(order, 1, -49) .. 'nb' .. string.sub(order, -46) end
local function countsOf(order) return string.sub(order, 1, -49) .. 'nk' .. string.sub(order, -46) end
local function bucketKey(order, low)
  return order .. ':' .. string.sub(low, 1, 1) .. string.format('%02x%02x%02x%02x%02x%02x%02x%02x', string.byte(low, 9, 16))
end
-- The bucket a member is in, or goes to, and its low (nil: the first bucket).
local function bucketOf(order, directory, member)
  local low = redis.call('ZRANGE', directory, '[' .. member, '-', 'BYLEX', 'REV', 'LIMIT', 0, 1)[1]
  if low then return bucketKey(order, low), low end
  return order, nil
end
local function orderHas(order, member)
  local key = bucketOf(order, directoryOf(order), member)
  return redis.call('ZSCORE', key, member)
end
local LETTERS = 'ZRQOKMF'
-- Adds a member; 1 when it was not there.
local function orderAdd(order, member)
  local directory = directoryOf(order)
  local key, low = bucketOf(order, directory, member)
  if redis.call('ZADD', key, 0, member) == 0 then return 0 end
  local split = low ~= nil or redis.call('EXISTS', directory) == 1
  if split then redis.call('HINCRBY', countsOf(order), string.sub(member, 1, 1), 1) end
  local size = redis.call('ZCARD', key)
  if size <= ORDER_BUCKET or size > 4 * ORDER_BUCKET then return 1 end
  if not split then
    -- The first split: the counts start from the one bucket.
    local counts = countsOf(order)
    for i = 1, #LETTERS do
      local letter = string.sub(LETTERS, i, i)
      local count = redis.call('ZLEXCOUNT', key, '[' .. letter, '(' .. letter .. '\\255')
      if count > 0 then redis.call('HSET', counts, letter, count) end
    end
  end
  local half = math.floor(size / 2)
  local upper = redis.call('ZRANGE', key, half, -1)
  -- A bucket is named by 8 bytes of its low's id: ids chosen to share them would name a new bucket
  -- as one that holds members, and the split would overwrite it (found by review: 65 of 193
  -- lost). The split moves up past such lows; with none free the bucket stays whole.
  local first = 1
  while upper[first] and redis.call('EXISTS', bucketKey(order, upper[first])) == 1 do first = first + 1 end
  if not upper[first] then return 1 end
  local moved = {}
  for i = first, #upper do
    moved[#moved + 1] = 0
    moved[#moved + 1] = upper[i]
  end
  redis.call('ZADD', bucketKey(order, upper[first]), unpack(moved))
  redis.call('ZREMRANGEBYRANK', key, half + first - 1, -1)
  redis.call('ZADD', directory, 0, upper[first])
  return 1
end
-- Takes a member away; 1 when it was there.
local function orderRemove(order, member)
  local directory = directoryOf(order)
  local key, low = bucketOf(order, directory, member)
  if redis.call('ZREM', key, member) == 0 then return 0 end
  if low == nil and redis.call('EXISTS', directory) == 0 then return 1 end
  local counts = countsOf(order)
  if redis.call('HINCRBY', counts, string.sub(member, 1, 1), -1) == 0 then redis.call('HDEL', counts, string.sub(member, 1, 1)) end
  local size = redis.call('ZCARD', key)
  if size > 0 and low and size < ORDER_BUCKET / 4 then
    -- A bucket gone sparse joins the one before it where both fit in half a bucket (deletions
    -- would otherwise leave many small sets, each a key's cost).
    local before = redis.call('ZRANGE', directory, '(' .. low, '-', 'BYLEX', 'REV', 'LIMIT', 0, 1)[1]
    local into = before and bucketKey(order, before) or order
    if redis.call('ZCARD', into) + size <= ORDER_BUCKET / 2 then
      local moved = {}
      for i, value in ipairs(redis.call('ZRANGE', key, 0, -1)) do
        moved[2 * i - 1] = 0
        moved[2 * i] = value
      end
      redis.call('ZADD', into, unpack(moved))
      redis.call('DEL', key)
      size = 0
    end
  end
  if size > 0 then return 1 end
  if low then
    redis.call('ZREM', directory, low)
  else
    local first = redis.call('ZRANGE', directory, 0, 0)[1]
    redis.call('RENAME', bucketKey(order, first), order)
    redis.call('ZREM', directory, first)
  end
  if redis.call('EXISTS', directory) == 0 then redis.call('DEL', counts) end
  return 1
end
-- The members from min to max (BYLEX bounds), at most limit, in order.
local function orderRange(order, min, max, limit)
  local directory = directoryOf(order)
  local key, low = bucketOf(order, directory, string.sub(min, 2))
  local out = {}
  while true do
    local found = redis.call('ZRANGE', key, min, max, 'BYLEX', 'LIMIT', 0, limit - #out)
    for _, member in ipairs(found) do out[#out + 1] = member end
    if #out >= limit then return out end
    low = redis.call('ZRANGE', directory, low and ('(' .. low) or '-', max, 'BYLEX', 'LIMIT', 0, 1)[1]
    if not low then return out end
    key = bucketKey(order, low)
  end
end
-- How many members from min to max (BYLEX bounds).
local function orderCount(order, min, max)
  local directory = directoryOf(order)
  local key, low = bucketOf(order, directory, string.sub(min, 2))
  local count = 0
  while true do
    count = count + redis.call('ZLEXCOUNT', key, min, max)
    low = redis.call('ZRANGE', directory, low and ('(' .. low) or '-', max, 'BYLEX', 'LIMIT', 0, 1)[1]
    if not low then return count end
    key = bucketKey(order, low)
  end
end
`;

/**
 * A page of a recipient's notifications (store/notification-index.ts): KEYS[1] its page order
 * (ORDER_FUNCTIONS); ARGV[1] how many per type at most, then per type its BYLEX bounds. Returns the
 * members of each type's range in turn (the caller merges them).
 */
export const NOTIFICATIONS_PAGE_SCRIPT = `${ORDER_FUNCTIONS}
local limit = tonumber(ARGV[1])
local out = {}
for i = 2, #ARGV, 2 do
  for _, member in ipairs(orderRange(KEYS[1], ARGV[i], ARGV[i + 1], limit)) do out[#out + 1] = member end
end
return out
`;

/**
 * A recipient's counts by type: KEYS[1] its page order; ARGV per type its letter and the place bound
 * past which a notification is older than since (none: every one). Returns the counts in that order.
 * With a directory, a count of all reads \`nk\`, and a count since a time walks the buckets of the
 * shorter side of the bound (the count of all less the older ones where those are fewer buckets).
 */
export const NOTIFICATION_COUNTS_SCRIPT = `${ORDER_FUNCTIONS}
local order = KEYS[1]
local directory = directoryOf(order)
local split = redis.call('EXISTS', directory) == 1
local out = {}
for i = 1, #ARGV, 2 do
  local letter, bound = ARGV[i], ARGV[i + 1]
  local all = '(' .. letter .. '\\255'
  if not split then
    out[#out + 1] = redis.call('ZLEXCOUNT', order, '[' .. letter, bound == '' and all or ('(' .. letter .. bound))
  elseif bound == '' then
    out[#out + 1] = tonumber(redis.call('HGET', countsOf(order), letter) or 0)
  else
    local newer = redis.call('ZLEXCOUNT', directory, '[' .. letter, '(' .. letter .. bound)
    local older = redis.call('ZLEXCOUNT', directory, '[' .. letter .. bound, all)
    if newer <= older then
      out[#out + 1] = orderCount(order, '[' .. letter, '(' .. letter .. bound)
    else
      out[#out + 1] = tonumber(redis.call('HGET', countsOf(order), letter) or 0) - orderCount(order, '[' .. letter .. bound, all)
    end
  end
end
return out
`;

/** NOTIFY's rule as a function (see NOTIFY_SCRIPT): tokens from ARGV[first] to ARGV[last]. */
const NOTIFY_FUNCTION = `${ORDER_FUNCTIONS}
local ORDER = 'ZRQOKMF'
local function best(live)
  local pick, pickRank
  for token in pairs(live) do
    local rank = string.find(ORDER, string.sub(token, 1, 1), 1, true)
    if rank and (not pick or rank < pickRank or (rank == pickRank and token < pick)) then pick, pickRank = token, rank end
  end
  return pick
end
-- A token's member: its letter and the place, then for a target's token (a letter and 8 hex
-- digits) the target's first 4 bytes, so that a notification of one reason needs no record.
local function memberFor(token, place)
  if #token == 1 then return token .. place end
  return string.sub(token, 1, 1) .. place .. (string.gsub(string.sub(token, 2), '..', function (pair) return string.char(tonumber(pair, 16)) end))
end
local function tokenOf(member)
  if #member <= 40 then return string.sub(member, 1, 1) end
  return string.sub(member, 1, 1) .. string.format('%02x%02x%02x%02x', string.byte(member, 41, 44))
end
-- Past every member of one place (a member has at most 4 bytes after it).
local PAST_PLACE = '\\255\\255\\255\\255\\255'
-- The member an event has in the order (nil: none), of one of the letters it may hold.
local function memberAt(order, place, look)
  for i = 1, #look do
    local letter = string.sub(look, i, i)
    local found = orderRange(order, '[' .. letter .. place, '[' .. letter .. place .. PAST_PLACE, 1)[1]
    if found then return found end
  end
end
-- look: the letters the event may hold for anyone (its reasons' letters; all seven where the caller
-- does not know the event), so that finding its member reads one range per letter it may have.
local function notify(records, order, d, id, place, look, first, last)
  -- A follow list's one reason (\`F\` alone: a list names a thousand pubkeys, and a replacement
  -- takes them all away and adds them again, dated by the new list), where the list has no other
  -- reason (look) and the recipient holds no record of it: its place only, added, or taken away
  -- with no tombstone. A list is replaceable, so a version once removed is never added again by a
  -- replay (a heal adds the version held: redis-event-store.ts), and a removal that comes before
  -- its addition (two writers) finds no place and takes the general path, which leaves the
  -- tombstone that addition meets.
  if look == 'F' and first == last and ARGV[first] == 'F' and redis.call('HEXISTS', records, id) == 0 then
    if d > 0 then return orderAdd(order, 'F' .. place) end
    if orderRemove(order, 'F' .. place) == 1 then return -1 end
  end
  local held = redis.call('HGET', records, id)
  local live, dead = {}, {}
  -- The event's member now (nil: none).
  local was
  if held then
    for token in string.gmatch(held, '%S+') do
      if string.sub(token, 1, 1) == '-' then dead[string.sub(token, 2)] = true else live[token] = true end
    end
    local before = best(live)
    if before then
      was = memberFor(before, place)
      -- A member written before target tokens were kept in it: its letter and place alone.
      if not orderHas(order, was) then was = string.sub(before, 1, 1) .. place end
    end
  else
    -- No record: one live reason, which the member says.
    was = memberAt(order, place, look)
    if was then live[tokenOf(was)] = true end
  end
  for index = first, last do
    local token = ARGV[index]
    if d > 0 then
      if not dead[token] then live[token] = true end
    else
      live[token] = nil
      dead[token] = true
    end
  end
  local after = best(live)
  local out = {}
  for token in pairs(live) do out[#out + 1] = token end
  for token in pairs(dead) do out[#out + 1] = '-' .. token end
  table.sort(out)
  if #out == 0 or (#out == 1 and live[out[1]]) then
    if held then redis.call('HDEL', records, id) end
  else
    redis.call('HSET', records, id, table.concat(out, ' '))
  end
  local is = after and memberFor(after, place)
  if was ~= is then
    if was then orderRemove(order, was) end
    if is then orderAdd(order, is) end
  end
  -- The change in the recipient's notifications: one more, one fewer, or none (a type changed).
  if not was and is then return 1 end
  if was and not is then return -1 end
  return 0
end
`;

/**
 * Reasons (tokens) of one event added to (ARGV[1] = 1) or taken from (-1) one recipient's
 * notifications (store/notification-index.ts applyTokens, the same rule): KEYS[1] the recipient's
 * records, event id (32 bytes) → its tokens, a taken one kept as a tombstone (`-<token>`), none
 * where the event has one live reason and no tombstone (nearly every notification: its member says
 * it); KEYS[2] its notifications in page order, one member each: the type's letter, the place
 * (ARGV[3], 39 bytes) and, where the deciding token is a target's, the target's first 4 bytes
 * (a member of the letter and place alone, written before, is still found). ARGV[2] the event's
 * id; ARGV[4] the letters of every reason the event has for anyone (\`ZRQOKMF\` where the caller
 * does not know them); ARGV[5…] the tokens. The type is the first letter of ZRQOKMF among the live tokens (DESIGN:
 * first that fits). Returns the change in the recipient's notifications (1, 0 or -1).
 */
export const NOTIFY_SCRIPT = `${NOTIFY_FUNCTION}
return notify(KEYS[1], KEYS[2], tonumber(ARGV[1]), ARGV[2], ARGV[3], ARGV[4], 5, #ARGV)
`;

/**
 * NOTIFY for many (recipient, event) at once (one Redis only): KEYS in pairs (records, order), ARGV
 * per pair: delta, id, place, the letters the event may hold, the number of tokens, the tokens.
 * Returns the change in the notifications held, summed.
 */
export const NOTIFY_MANY_SCRIPT = `${NOTIFY_FUNCTION}
local at = 1
local changed = 0
for i = 1, #KEYS / 2 do
  local count = tonumber(ARGV[at + 4])
  changed = changed + notify(KEYS[2 * i - 1], KEYS[2 * i], tonumber(ARGV[at]), ARGV[at + 1], ARGV[at + 2], ARGV[at + 3], at + 5, at + 4 + count)
  at = at + 5 + count
end
return changed
`;

/**
 * Follow lists' follows (each list's one reason per pubkey it names, \`F\`) added or taken away, on
 * one Redis (the recipients' keys are in many slots, made here from their tags): ARGV[1] the key
 * prefix, ARGV[2] the token \`F\`, ARGV[3] per list its change (a signed byte), id (32 bytes), place
 * (39), how many recipients (4 bytes, big-endian), then each recipient's key tag (43 characters,
 * keys.ts). Only lists whose one reason is \`F\` (no quote: NOTIFY's look is \`F\`). Each as NOTIFY
 * would. Returns the change in notifications.
 */
export const NOTIFY_FOLLOWS_SCRIPT = `${NOTIFY_FUNCTION}
local prefix, packed = ARGV[1], ARGV[3]
local at, changed = 1, 0
while at + 75 <= #packed do
  local d = string.byte(packed, at)
  if d > 127 then d = d - 256 end
  local id = string.sub(packed, at + 1, at + 32)
  local place = string.sub(packed, at + 33, at + 71)
  local b1, b2, b3, b4 = string.byte(packed, at + 72, at + 75)
  local count = ((b1 * 256 + b2) * 256 + b3) * 256 + b4
  at = at + 76
  for _ = 1, count do
    local tag = string.sub(packed, at, at + 42)
    at = at + 43
    changed = changed + notify(prefix .. 'nr:{' .. tag .. '}', prefix .. 'nz:{' .. tag .. '}', d, id, place, 'F', 2, 2)
  end
end
return changed
`;

/**
 * Many authors' notes at once (one Redis only: the authors' lists are in many slots), for a home
 * feed (schema/feed.ts): KEYS the authors' lists; ARGV[1] how many per range; ARGV[2] the number of
 * ranges, then each range's BYLEX bounds (author-list.ts kindRange), the same for every key (a feed
 * reads its authors from one place, so the bounds are sent once, not once per author). Returns per
 * key the members of its ranges, each range's first ARGV[1] (the caller merges a key's ranges).
 */
export const TIMELINES_SCRIPT = `
local limit, ranges = tonumber(ARGV[1]), tonumber(ARGV[2])
local out = {}
for i = 1, #KEYS do
  local found = {}
  for r = 1, ranges do
    local members = redis.call('ZRANGE', KEYS[i], ARGV[1 + 2 * r], ARGV[2 + 2 * r], 'BYLEX', 'LIMIT', 0, limit)
    for _, member in ipairs(members) do found[#found + 1] = member end
  end
  out[i] = found
end
return out
`;

/**
 * Whose lists changed (store/list-changes.ts): KEYS[1] the stream; ARGV[1] a cursor (the id of the
 * last entry read, or 0-0 before any), ARGV[2] the most entries to return. Returns 1 and nothing when
 * the cursor cannot be read from, else 0 and the entries after it. Trimming takes the oldest
 * entries first, so while the cursor's own entry is held every later one is; 0-0 is good while the
 * stream is shorter than what trimming keeps (it was never trimmed). A stream deleted and made
 * again holds none of the old ids.
 */
export const LIST_CHANGES_SCRIPT = `
local after = ARGV[1]
if after ~= '0-0' then
  if #redis.call('XRANGE', KEYS[1], after, after) == 0 then return {1, {}} end
elseif redis.call('XLEN', KEYS[1]) >= tonumber(ARGV[2]) then
  return {1, {}}
end
return {0, redis.call('XRANGE', KEYS[1], '(' .. after, '+', 'COUNT', ARGV[2])}
`;

/** NOTE_INDEX's rule as a function: one note's member added (delta > 0) or taken away, in its word lists. */
const NOTE_INDEX_FUNCTION = `
local function indexNote(wordsKey, tombstones, delta, member, lists, words)
  local changed = 0
  if delta > 0 then
    if redis.call('SISMEMBER', tombstones, member) == 1 then return 0 end
    for i = 1, #lists do
      if redis.call('ZADD', lists[i], 0, member) == 1 then
        changed = changed + 1
        if redis.call('ZCARD', lists[i]) == 1 then redis.call('ZADD', wordsKey, 0, words[i]) end
      end
    end
  else
    redis.call('SADD', tombstones, member)
    for i = 1, #lists do
      if redis.call('ZREM', lists[i], member) == 1 then
        changed = changed + 1
        if redis.call('EXISTS', lists[i]) == 0 then redis.call('ZREM', wordsKey, words[i]) end
      end
    end
  end
  return changed
end
`;

/**
 * A note added to (ARGV[1] 1) or taken from (-1) one shard of the note search index
 * (store/note-search-index.ts): KEYS[1] the shard's words (`q:{q<h>}:v`, a word while its list holds
 * a note), KEYS[2] its tombstones (`q:{q<h>}:d`), KEYS[3…] the note's word lists (`q:{q<h>}:w:<word>`);
 * ARGV[2] the note's member (place, kind, size), ARGV[3…] the words, in the order of their lists. As
 * NOTE: a removal leaves a tombstone for good, and no addition (late, or another writer's replay)
 * lists the note past it. Returns the postings it changed.
 */
export const NOTE_INDEX_SCRIPT = `${NOTE_INDEX_FUNCTION}
local lists, words = {}, {}
for i = 3, #KEYS do
  lists[#lists + 1] = KEYS[i]
  words[#words + 1] = ARGV[i]
end
return indexNote(KEYS[1], KEYS[2], tonumber(ARGV[1]), ARGV[2], lists, words)
`;

/**
 * NOTE_INDEX for a batch's notes of one shard, in the order given: KEYS[1], KEYS[2] as NOTE_INDEX,
 * KEYS[3…] the lists of the words the notes hold, each once; ARGV[1] how many words (lists), ARGV[2…]
 * those words in the lists' order, then per note its delta, its member, how many words it holds
 * and their places among the words (1 for the first). One call a shard and batch, where a call a
 * note was most of what an import spent on the index beside Redis' own writes (BENCHMARKS.md).
 * Returns the postings it changed.
 */
export const NOTE_INDEX_MANY_SCRIPT = `${NOTE_INDEX_FUNCTION}
local count = tonumber(ARGV[1])
local at = count + 2
local changed = 0
while at <= #ARGV do
  local delta, member, held = tonumber(ARGV[at]), ARGV[at + 1], tonumber(ARGV[at + 2])
  local lists, words = {}, {}
  for i = 1, held do
    local place = tonumber(ARGV[at + 2 + i])
    lists[i] = KEYS[2 + place]
    words[i] = ARGV[1 + place]
  end
  changed = changed + indexNote(KEYS[1], KEYS[2], delta, member, lists, words)
  at = at + 3 + held
end
return changed
`;

/**
 * One shard's answer to a note search (store/note-search-index.ts): KEYS[1…ARGV[1]] the lists of
 * the query's whole words (a note must be in each), the other KEYS the lists of its last word's
 * expansion (a note must be in one). ARGV[2], ARGV[3] the BYLEX bounds (after the cursor, or from
 * `until`; to `since`), ARGV[4] the matches wanted, ARGV[5] the most work to do (a posting looked at,
 * a lookup, a range read: one each; at least one posting is looked at), ARGV[6]
 * the kinds asked as 2-byte values ('' for every kind), ARGV[7] '1' when the call goes on from where an
 * earlier one of the same search stopped (its lists' first reads are not counted again). The smallest side drives: the rarest whole
 * word's list, or the expansion's lists merged (when they hold fewer postings); each posting it
 * reads is looked up in the other whole words' lists and in the expansion's lists more than four
 * times as long as the driving one, and met by a walk of the others (a lookup in each of 13 short
 * lists per posting was 60,000 lookups for a rare two-word query over 1,000,000 notes:
 * BENCHMARKS.md; a walk of a list far longer than the driving one reads a range per posting: found
 * by review). Members compare byte by byte (their order in Redis),
 * never with Lua's locale-bound string order. Returns a status (1: nothing more in the shard, 2:
 * the matches wanted found, 0: stopped after ARGV[5] units of work), the last member looked at, the
 * units of work done, then the matches in order.
 */
export const NOTE_SEARCH_SCRIPT = `
local whole = tonumber(ARGV[1])
local stop, want, cap, kinds = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local unpack = struct.unpack
-- Byte order. Members nearly always differ in their first 8 bytes (the place's second, then the
-- id's first bytes): read as two numbers by one call each, not a byte at a time (the byte loop
-- was about a sixth of a rare two-word query's time).
local function less(a, b)
  if #a >= 8 and #b >= 8 then
    local a1, a2 = unpack('>I4>I4', a)
    local b1, b2 = unpack('>I4>I4', b)
    if a1 ~= b1 then return a1 < b1 end
    if a2 ~= b2 then return a2 < b2 end
  end
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local drive, checks, anyOf = {}, {}, {}
local rarest, fewest = 0, -1
for i = 1, whole do
  local n = redis.call('ZCARD', KEYS[i])
  if n == 0 then return {1, '', 1} end
  if fewest < 0 or n < fewest then rarest, fewest = i, n end
end
local expansion, sizes = 0, {}
for i = whole + 1, #KEYS do
  sizes[i] = redis.call('ZCARD', KEYS[i])
  expansion = expansion + sizes[i]
end
-- An expansion's list shorter than the driving list is walked beside it; a longer one is looked up.
local walked = {}
if #KEYS > whole and (whole == 0 or expansion < fewest) then
  for i = whole + 1, #KEYS do drive[#drive + 1] = KEYS[i] end
  for i = 1, whole do checks[#checks + 1] = KEYS[i] end
else
  drive[1] = KEYS[rarest]
  for i = 1, whole do if i ~= rarest then checks[#checks + 1] = KEYS[i] end end
  for i = whole + 1, #KEYS do
    if sizes[i] < 4 * fewest then walked[#walked + 1] = KEYS[i] else anyOf[#anyOf + 1] = KEYS[i] end
  end
end
-- The work done: a posting looked at, a lookup, a range read each count one.
local work = 0
-- A call that goes on from where an earlier one stopped (ARGV[7] '1') does not count its first
-- range read of each list: the earlier call counted it, and a query of a prefix's 64 words would
-- otherwise spend its work reopening its lists at every round (found by review).
local goesOn = ARGV[7] == '1'
local function fill(head)
  if head.opened or not goesOn then work = work + 1 end
  head.opened = true
  head.buffer = redis.call('ZRANGE', head.key, head.from, stop, 'BYLEX', 'LIMIT', 0, head.chunk)
  head.at = 1
  if #head.buffer < head.chunk then head.done = true end
  if #head.buffer > 0 then head.from = '(' .. head.buffer[#head.buffer] end
end
local chunk = math.min(cap, 256)
if #drive > 1 then chunk = math.min(cap, want + 1, 32) end
local heads = {}
for i, key in ipairs(drive) do heads[i] = {key = key, from = ARGV[2], buffer = {}, at = 1, done = false, chunk = chunk} end
for _, head in ipairs(heads) do fill(head) end
-- The expansion's lists, walked beside the driving list (both in order): each is read in pieces
-- from the posting asked (a range read that skips what is behind it), what is read goes into one
-- set, and a posting is in one of them when the set holds it. A list is read again only once the
-- posting asked is past the last member read of it; \`frontier\`, the least of those, tells it in
-- one comparison (a comparison per list per posting was half of a rare two-word query's script).
local walks, seen = {}, {}
for i, key in ipairs(walked) do walks[i] = {key = key, from = ARGV[2], buffer = {}, at = 1, done = false, chunk = 16} end
local frontier, started = nil, false
-- The frontier's first 8 bytes as two numbers, read once: most postings are told by them alone.
local f1, f2 = 0, 0
local function pastFrontier(member)
  if frontier == nil then return false end
  local m1, m2 = unpack('>I4>I4', member)
  if m1 ~= f1 then return f1 < m1 end
  if m2 ~= f2 then return f2 < m2 end
  return less(frontier, member)
end
local function walksMeet(member)
  if not started or pastFrontier(member) then
    started = true
    frontier = nil
    for _, walk in ipairs(walks) do
      if not walk.done then
        local tail = walk.buffer[#walk.buffer]
        if tail == nil or less(tail, member) then
          walk.from = '[' .. member
          fill(walk)
          for _, read in ipairs(walk.buffer) do seen[read] = true end
        end
        tail = walk.buffer[#walk.buffer]
        if not walk.done and tail ~= nil and (frontier == nil or less(tail, frontier)) then frontier = tail end
      end
    end
    if frontier ~= nil then f1, f2 = unpack('>I4>I4', frontier) end
  end
  return seen[member] == true
end
local kindSet = {}
for k = 1, #kinds, 2 do kindSet[string.sub(kinds, k, k + 1)] = true end
local out, last = {2, '', 0}, nil
while true do
  local least = nil
  for _, head in ipairs(heads) do
    if head.at > #head.buffer and not head.done then fill(head) end
    if head.at <= #head.buffer and (least == nil or less(head.buffer[head.at], least.buffer[least.at])) then least = head end
  end
  if least == nil then out[1] = 1 break end
  local member = least.buffer[least.at]
  least.at = least.at + 1
  if member ~= last then
    if last ~= nil and work >= cap then out[1] = 0 break end
    work = work + 1
    last = member
    local ok = kinds == '' or kindSet[string.sub(member, 40, 41)] == true
    for _, key in ipairs(checks) do
      if not ok then break end
      work = work + 1
      if not redis.call('ZSCORE', key, member) then ok = false end
    end
    if ok and #walks + #anyOf > 0 then
      ok = #walks > 0 and walksMeet(member)
      for _, key in ipairs(anyOf) do
        if ok then break end
        work = work + 1
        if redis.call('ZSCORE', key, member) then ok = true end
      end
    end
    if ok then
      out[#out + 1] = member
      if #out - 3 >= want then break end
    end
  end
end
out[2] = last or ''
out[3] = work
return out
`;

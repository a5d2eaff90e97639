// Server-side scripts: each runs atomically, so two replicas serving one session can never
// interleave a read and the write that depends on it.

/**
 * advanceTurn. KEYS[1] turn key, KEYS[2] that turn's rewrites key. ARGV: n, at, ttlMs, expirySeconds.
 * Returns {previous "n,at,ttlMs", its rewrites "i,j,…" or false} (or nil), stores the new turn with
 * the TTL widened and clears the rewrites so a turn that rewrites nothing records nothing.
 */
export const ADVANCE_TURN = `
local prev = redis.call('GET', KEYS[1])
local rw = redis.call('GET', KEYS[2])
local ttl = ARGV[3]
if prev then
  local pt = string.match(prev, ',(%d+)$')
  if pt and tonumber(pt) > tonumber(ttl) then ttl = pt end
end
redis.call('SET', KEYS[1], ARGV[1] .. ',' .. ARGV[2] .. ',' .. ttl, 'EX', ARGV[4])
redis.call('DEL', KEYS[2])
if prev then return {prev, rw or ''} end
return false
`;

/**
 * getStash. KEYS[1] stash key, KEYS[2] the tenant's LRU zset. ARGV: ttlSeconds, nowMs, id.
 * Reads and slides the entry and bumps its recency in one step.
 */
export const GET_STASH = `
local v = redis.call('GETEX', KEYS[1], 'EX', ARGV[1])
if v then
  redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
  redis.call('EXPIRE', KEYS[2], ARGV[1])
end
return v
`;

/**
 * Trims a tenant's stashes to its cap, least recently used first (an expired id is the oldest,
 * so it goes first). KEYS[1] LRU zset. ARGV: maxEntries, stash key prefix.
 * The popped stash keys share KEYS[1]'s hash tag, so they live in the same cluster slot.
 */
export const TRIM_STASH = `
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[1])
if over <= 0 then return 0 end
local popped = redis.call('ZPOPMIN', KEYS[1], over)
for i = 1, #popped, 2 do redis.call('UNLINK', ARGV[2] .. popped[i]) end
return over
`;

/**
 * loadSession. KEYS: 1 frozen hash, 2 frozen index set, 3 lost set, 4 offloaded flag, 5 arm, then
 * one kept key per content key. ARGV: ttlSeconds, indexTtlSeconds, then the content keys.
 * Slides what it reads. A slot in the index but missing from the hash was lost since the last
 * look: it moves to the lost set and is counted once (returned as the 5th element).
 * Returns { frozen flat [slot, replacement, …], lost slots, kept content keys, offloaded 0|1, newly lost, arm or false }.
 */
export const LOAD_SESSION = `
local ttl, ittl = ARGV[1], ARGV[2]
local wanted = {}
for i = 3, #ARGV do wanted[ARGV[i]] = true end
local function ck(slot)
  local p = string.find(slot, ':', 1, true)
  if p then return string.sub(slot, p + 1) end
  return slot
end
local frozen, have = {}, {}
local all = redis.call('HGETALL', KEYS[1])
if #all > 0 then redis.call('EXPIRE', KEYS[1], ttl) end
for i = 1, #all, 2 do
  have[all[i]] = true
  if wanted[ck(all[i])] then
    frozen[#frozen + 1] = all[i]
    frozen[#frozen + 1] = all[i + 1]
  end
end
local newly = 0
local idx = redis.call('SMEMBERS', KEYS[2])
for _, slot in ipairs(idx) do
  if wanted[ck(slot)] and not have[slot] then
    redis.call('SREM', KEYS[2], slot)
    redis.call('SADD', KEYS[3], slot)
    newly = newly + 1
  end
end
if #idx > 0 then redis.call('EXPIRE', KEYS[2], ittl) end
local lost = {}
local lostAll = redis.call('SMEMBERS', KEYS[3])
for _, slot in ipairs(lostAll) do
  if wanted[ck(slot)] then lost[#lost + 1] = slot end
end
if #lostAll > 0 then redis.call('EXPIRE', KEYS[3], ittl) end
local kept = {}
for i = 6, #KEYS do
  if redis.call('EXPIRE', KEYS[i], ttl) == 1 then kept[#kept + 1] = ARGV[i - 3] end
end
local off = redis.call('EXPIRE', KEYS[4], ttl)
local arm = redis.call('GETEX', KEYS[5], 'EX', ttl)
return { frozen, lost, kept, off, newly, arm }
`;

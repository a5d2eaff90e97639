// Server-side scripts: each runs atomically, so two replicas serving one session can never
// interleave a read and the write that depends on it.

/**
 * advanceTurn. KEYS[1] turn key, KEYS[2] that turn's rewrites key. ARGV: n, at, ttlMs, expirySeconds.
 * Returns {previous "n,at,ttlMs", its rewrites "i,j,…" or false} (or nil), stores the new turn with
 * the TTL widened and clears the rewrites so a turn that rewrites nothing records nothing.
 */
const ADVANCE_TURN = `
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
const GET_STASH = `
local v = redis.call('GETEX', KEYS[1], 'EX', ARGV[1])
if v then
  redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
  redis.call('EXPIRE', KEYS[2], ARGV[1])
end
return v
`;

/**
 * Trims a tenant's stashes to its cap, least recently used first (an expired id is the oldest,
 * so it goes first). lru: the LRU zset; max: maxEntries; pfx: the stash key prefix.
 * The popped stash keys share the zset's hash tag, so they live in the same cluster slot.
 */
const TRIM_FN = `
local function trim_stash(lru, max, pfx, sz, bytes)
  local over = redis.call('ZCARD', lru) - tonumber(max)
  if over <= 0 then return 0 end
  local popped = redis.call('ZPOPMIN', lru, over)
  for i = 1, #popped, 2 do
    redis.call('UNLINK', pfx .. popped[i])
    redis.call('DECRBY', bytes, tonumber(redis.call('HGET', sz, popped[i]) or '0'))
    redis.call('HDEL', sz, popped[i])
  end
  return over
end
`;

/**
 * The tenant's byte budget (docs/security.md, abuse bounds): sz the hash id → bytes stored, bytes
 * the tenant's total. Entries scored before now − ttl have expired: they are uncounted first (a
 * bounded batch per call). A new original that does not fit refuses the whole turn's stash
 * (returns false) unless forced; otherwise the sizes are recorded and true comes back.
 * The pairs are ARGV from `from`: s (id, original) pairs.
 */
const BUDGET_FN = `
local function stash_fits(lru, sz, bytes, pfx, now, ttl, budget, force, from, s)
  local total = tonumber(redis.call('GET', bytes) or '0')
  local stale = redis.call('ZRANGEBYSCORE', lru, '-inf', tonumber(now) - tonumber(ttl) * 1000, 'LIMIT', 0, 256)
  for _, id in ipairs(stale) do
    if redis.call('EXISTS', pfx .. id) == 0 then
      total = total - tonumber(redis.call('HGET', sz, id) or '0')
      redis.call('HDEL', sz, id)
      redis.call('ZREM', lru, id)
    end
  end
  if total < 0 then total = 0 end
  local add = 0
  for i = from, from + 2 * s - 1, 2 do
    add = add + string.len(ARGV[i + 1]) - tonumber(redis.call('HGET', sz, ARGV[i]) or '0')
  end
  if tonumber(budget) > 0 and force ~= '1' and add > 0 and total + add > tonumber(budget) then
    redis.call('SET', bytes, total, 'EX', ttl)
    return false
  end
  for i = from, from + 2 * s - 1, 2 do redis.call('HSET', sz, ARGV[i], string.len(ARGV[i + 1])) end
  redis.call('SET', bytes, total + add, 'EX', ttl)
  redis.call('EXPIRE', sz, ttl)
  return true
end
`;

/**
 * The session load. k: frozen hash, frozen index set, lost set, offloaded flag, arm; kk: one kept
 * key per content key of cks. Slides what it reads. A slot in the index but missing from the hash
 * was lost since the last look: it moves to the lost set and is counted once (the 5th element).
 * Returns { frozen flat [slot, replacement, …], lost slots, kept content keys, offloaded 0|1, newly lost, arm or false }.
 */
const LOAD_FN = `
local function load_session(k, kk, ttl, ittl, cks)
  local wanted = {}
  for _, c in ipairs(cks) do wanted[c] = true end
  local function ck(slot)
    local p = string.find(slot, ':', 1, true)
    if p then return string.sub(slot, p + 1) end
    return slot
  end
  local frozen, have = {}, {}
  local all = redis.call('HGETALL', k[1])
  if #all > 0 then redis.call('EXPIRE', k[1], ttl) end
  for i = 1, #all, 2 do
    have[all[i]] = true
    if wanted[ck(all[i])] then
      frozen[#frozen + 1] = all[i]
      frozen[#frozen + 1] = all[i + 1]
    end
  end
  local newly = 0
  local idx = redis.call('SMEMBERS', k[2])
  for _, slot in ipairs(idx) do
    if wanted[ck(slot)] and not have[slot] then
      redis.call('SREM', k[2], slot)
      redis.call('SADD', k[3], slot)
      newly = newly + 1
    end
  end
  if #idx > 0 then redis.call('EXPIRE', k[2], ittl) end
  local lost = {}
  local lostAll = redis.call('SMEMBERS', k[3])
  for _, slot in ipairs(lostAll) do
    if wanted[ck(slot)] then lost[#lost + 1] = slot end
  end
  if #lostAll > 0 then redis.call('EXPIRE', k[3], ittl) end
  local kept = {}
  for i, key in ipairs(kk) do
    if redis.call('EXPIRE', key, ttl) == 1 then kept[#kept + 1] = cks[i] end
  end
  local off = redis.call('EXPIRE', k[4], ttl)
  local arm = redis.call('GETEX', k[5], 'EX', ttl)
  return { frozen, lost, kept, off, newly, arm }
end
local function slice(t, from, to)
  local out = {}
  for i = from, to do out[#out + 1] = t[i] end
  return out
end
`;

/**
 * loadSession. KEYS: 1 frozen hash, 2 frozen index set, 3 lost set, 4 offloaded flag, 5 arm, then
 * one kept key per content key. ARGV: ttlSeconds, indexTtlSeconds, then the content keys.
 */
const LOAD_SESSION = `${LOAD_FN}
return load_session(KEYS, slice(KEYS, 6, #KEYS), ARGV[1], ARGV[2], slice(ARGV, 3, #ARGV))
`;

/**
 * A turn's writes, atomically, guarded. KEYS: 1–5 as loadSession's, 6 the tenant's LRU zset, 7 the
 * session's ownership set, 8 the conversation's rewrites, 9 the tenant's stash sizes, 10 its byte
 * total, then one kept key per guarded content key. ARGV: 1 ttlSeconds, 2 indexTtlSeconds,
 * 3 maxEntries, 4 stash key prefix, 5 nowMs, 6 offloaded '1'|'0', 7 arm or '', 8 rewrites "i,j,…"
 * or '-' (none), 9 byte budget (0: none), 10 '1': write the stash past the budget, 11 u, then u
 * guarded content keys, then s and s (id, original) pairs, then f and f (slot, replacement) pairs.
 * When the session holds a decision, lost mark or kept mark for a guarded key, nothing is written
 * and { 0, the load's answer for those keys } comes back; when the stash does not fit the budget,
 * nothing is written and { 2, 0 } comes back; otherwise { 1, lost slots repaired }.
 */
const WRITE_TURN = `${LOAD_FN}${TRIM_FN}${BUDGET_FN}
local ttl, ittl = ARGV[1], ARGV[2]
local u = tonumber(ARGV[11])
local pos = 12
if u > 0 then
  local snap = load_session(KEYS, slice(KEYS, 11, #KEYS), ttl, ittl, slice(ARGV, pos, pos + u - 1))
  if #snap[1] > 0 or #snap[2] > 0 or #snap[3] > 0 then return { 0, snap } end
  pos = pos + u
end
local s = tonumber(ARGV[pos])
if s > 0 and not stash_fits(KEYS[6], KEYS[9], KEYS[10], ARGV[4], ARGV[5], ttl, ARGV[9], ARGV[10], pos + 1, s) then return { 2, 0 } end
for i = pos + 1, pos + 2 * s, 2 do
  redis.call('SET', ARGV[4] .. ARGV[i], ARGV[i + 1], 'EX', ttl)
  redis.call('ZADD', KEYS[6], ARGV[5], ARGV[i])
  redis.call('SADD', KEYS[7], ARGV[i])
end
if s > 0 then
  redis.call('EXPIRE', KEYS[6], ttl)
  redis.call('EXPIRE', KEYS[7], ttl)
  trim_stash(KEYS[6], ARGV[3], ARGV[4], KEYS[9], KEYS[10])
end
pos = pos + 1 + 2 * s
local f = tonumber(ARGV[pos])
local repaired = 0
for i = pos + 1, pos + 2 * f, 2 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  redis.call('SADD', KEYS[2], ARGV[i])
  repaired = repaired + redis.call('SREM', KEYS[3], ARGV[i])
end
if f > 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
  redis.call('EXPIRE', KEYS[2], ittl)
end
if ARGV[6] == '1' then redis.call('SET', KEYS[4], '1', 'EX', ttl) end
-- NX: the first arm recorded stays (two replicas seeing a session's first turn agree anyway).
if ARGV[7] ~= '' then redis.call('SET', KEYS[5], ARGV[7], 'EX', ttl, 'NX') end
if ARGV[8] ~= '-' then redis.call('SET', KEYS[8], ARGV[8], 'EX', ttl) end
return { 1, repaired }
`;

/** Registers the scripts as commands of a connection (ioredis sends EVALSHA, loading a script on a miss). */
export function defineScripts(redis: { defineCommand(name: string, d: { lua: string; numberOfKeys?: number }): void }): void {
  redis.defineCommand('cgAdvanceTurn', { lua: ADVANCE_TURN, numberOfKeys: 2 });
  redis.defineCommand('cgGetStash', { lua: GET_STASH, numberOfKeys: 2 });
  redis.defineCommand('cgLoadSession', { lua: LOAD_SESSION });
  redis.defineCommand('cgWriteTurn', { lua: WRITE_TURN });
}

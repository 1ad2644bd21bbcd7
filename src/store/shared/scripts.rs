//! What runs on the server: the shared store's Lua scripts (a page of a text, a field of an
//! entry, the shown runs, a re-issue, an admission), each run atomically with `EVALSHA`
//! ([`Cmd::script`]), and [`set_field_cmd`], the one call built around a script alone. Owns the
//! scripts and their `KEYS`/`ARGV` contracts (documented on each; the key layout is the parent
//! module's). Must never scan the key space or do work the caps do not bound (a script blocks the
//! server while it runs), never return more of a text than a page asked for, and never leave a
//! key without a TTL but the bounded fleet-wide ones.

use super::key;
use crate::store::resp::Cmd;

/// The index mark `ARGV[1]` (byte offset into `KEYS[1]`: 8 bytes, little-endian) and the text
/// `KEYS[2]` from there to the mark `ARGV[5]` (to the end without it, or if empty), at most
/// `ARGV[2]` bytes: `{offset, text, end}` (`end`: that mark's offset, or -1), or nil without the
/// first mark; refreshes entry `ARGV[4]`'s recency in `KEYS[3]` to `ARGV[3]`. The text ends at
/// the page's last line because the server's Lua copies every byte of a reply it returns
/// (about 1 us a KB: 38 us for a whole chunk, the most costly call of a page).
pub(super) const PAGE: &str = r#"
redis.call('ZADD', KEYS[3], 'XX', ARGV[3], ARGV[4])
local function mark(at)
  local m = redis.call('GETRANGE', KEYS[1], at, tonumber(at) + 7)
  if #m ~= 8 then return nil end
  local n = 0
  for i = 8, 1, -1 do n = n * 256 + string.byte(m, i) end
  return n
end
local off = mark(ARGV[1])
if not off then return false end
local stop, e = off + tonumber(ARGV[2]), -1
if ARGV[5] ~= '' then e = mark(ARGV[5]) or -1 end
if e >= 0 and e < stop then stop = e end
return {off, redis.call('GETRANGE', KEYS[2], off, stop - 1), e}
"#;

/// Writes `ARGV[2]` as field `ARGV[1]` of entry `KEYS[1]` (`s`: the shown runs, `a`: a tool's
/// attachment) if it still exists (never recreates an expired entry without its TTL).
const SET_FIELD: &str = "if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) return 1 end return 0";

/// Appends `ARGV[1]` to the shown runs (field `s`) of entry `KEYS[1]` if it still exists: runs
/// may overlap, [`SharedText::shown`](super::SharedText::shown) takes their union. One script, so two recoveries of the
/// same id at once both add what they showed.
pub(super) const ADD_SHOWN: &str = "if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end local c = redis.call('HGET', KEYS[1], 's') if c and c ~= '' and ARGV[1] ~= '' then c = c .. ',' .. ARGV[1] elseif ARGV[1] ~= '' then c = ARGV[1] end if c then redis.call('HSET', KEYS[1], 's', c) end return 1";

/// The [`SET_FIELD`] call writing `value` as `field` of entry `id`.
pub(super) fn set_field_cmd(id: &str, field: &str, value: impl AsRef<[u8]>) -> Cmd {
    Cmd::script(SET_FIELD)
        .num(1)
        .arg(key("e", id))
        .arg(field)
        .arg(value)
}

/// Re-issues the live id of the same output: ARGV = prefix, content key, now (ms), ttl (ms),
/// owner, origin, label, list max, grace (ms). Returns the id, or nil.
pub(super) const REISSUE: &str = concat!(
    lua_prelude!(),
    r#"
local id = reissue(ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5], ARGV[6], ARGV[7], tonumber(ARGV[8]), tonumber(ARGV[9]))
if not id then return false end
return id
"#
);

/// Admits an uploaded text as entry `ARGV[2]`: forgets the costs of entries that expired, evicts
/// the least recently used until the new one fits the caps (recording why in `g:ID`), then
/// writes its entry, index, content key and owner. ARGV = prefix, id, cost, now (ms), ttl (ms),
/// max bytes, max entries, owner, content key, origin, label, bytes, lines, index, list max,
/// grace (ms), eviction log length, re-issue first (`1`: the same output's live id, if any,
/// is re-issued instead and the upload deleted; the upload came in the same round trip, so
/// its TTL is fresh), ttl + grace (ms), now - ttl (ms: entries last used before it expired).
/// Each eviction is logged (`evlog`, newest first, and the count `evseq`) so that replicas drop
/// their near copies of it; the log is trimmed to its length once it holds twice that. Returns
/// the number evicted, -1 when the uploaded text is gone, or the id re-issued (a string).
///
/// Costs the server's CPU on every new output, so: the entry count and the byte total are read
/// once and kept in locals (one `INCRBY` of the net change at the end), the oldest entry is
/// taken by `ZPOPMIN`, and the numbers given to `redis.call` are ARGV's strings (a Lua number
/// is formatted with `%.17g` on every call).
pub(super) const ADMIT: &str = concat!(
    lua_prelude!(),
    r#"
local p, id, cost, now, ttl = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local maxb, maxn, owner, ckey = tonumber(ARGV[6]), tonumber(ARGV[7]), ARGV[8], ARGV[9]
local listmax, grace, tttl = tonumber(ARGV[15]), tonumber(ARGV[16]), ARGV[19]
local fresh = ARGV[18] == '1'
if fresh then
  local again = reissue(p, ckey, tonumber(now), tonumber(ttl), owner, ARGV[10], ARGV[11], listmax, grace)
  if again then
    redis.call('DEL', p .. 't:' .. id)
    return again
  end
end
local lru, sz, tot = p .. 'lru', p .. 'sz', p .. 'bytes'
local freed = 0
local function forget(o)
  freed = freed + tonumber(redis.call('HGET', sz, o) or '0')
  redis.call('HDEL', sz, o)
end
for _, o in ipairs(redis.call('ZRANGEBYSCORE', lru, '-inf', ARGV[20], 'LIMIT', '0', '256')) do
  if redis.call('EXISTS', p .. 'e:' .. o) == 0 then
    forget(o)
    redis.call('ZREM', lru, o)
    redis.call('DEL', p .. 't:' .. o, p .. 'x:' .. o)
  end
end
if redis.call('EXISTS', p .. 't:' .. id) == 0 then
  if freed ~= 0 then redis.call('DECRBY', tot, tostring(freed)) end
  return -1
end
local n = redis.call('ZCARD', lru)
local b = tonumber(redis.call('GET', tot) or '0') - freed
local size = tonumber(cost)
local evicted = {}
while n > 0 and (n + 1 > maxn or b + size > maxb) do
  local o = redis.call('ZPOPMIN', lru)[1]
  local was = freed
  forget(o)
  b = b - (freed - was)
  n = n - 1
  if redis.call('DEL', p .. 'e:' .. o, p .. 't:' .. o, p .. 'x:' .. o) > 0 then
    redis.call('SET', p .. 'g:' .. o, 'evicted', 'PX', ttl)
    evicted[#evicted + 1] = o
  end
end
if #evicted > 0 then
  local keep, len = tonumber(ARGV[17]), 0
  for i = 1, #evicted, 256 do
    len = redis.call('LPUSH', p .. 'evlog', unpack(evicted, i, math.min(i + 255, #evicted)))
  end
  if len > 2 * keep then redis.call('LTRIM', p .. 'evlog', '0', tostring(keep - 1)) end
  redis.call('INCRBY', p .. 'evseq', tostring(#evicted))
end
redis.call('HSET', p .. 'e:' .. id, 'o', ARGV[10], 'l', ARGV[11], 'b', ARGV[12], 'n', ARGV[13])
redis.call('SET', p .. 'x:' .. id, ARGV[14], 'PX', tttl)
redis.call('PEXPIRE', p .. 'e:' .. id, ttl)
if not fresh then redis.call('PEXPIRE', p .. 't:' .. id, tttl) end
redis.call('ZADD', lru, now, id)
redis.call('HSET', sz, id, cost)
if size ~= freed then redis.call('INCRBY', tot, tostring(size - freed)) end
redis.call('SET', ckey, id, 'PX', ttl)
list_for(p, owner, id, now, ttl, listmax)
return #evicted
"#
);

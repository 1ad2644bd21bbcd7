//! Lua shared by the shared store's server-side scripts ([`super::shared`], [`super::near`]),
//! prepended to each with `concat!`: one definition of how an entry's TTL is refreshed, how a
//! session lists an id, and how the same output's live id is re-issued. Owns no key layout of its
//! own (the keys are `super::shared`'s); must stay free of side effects at load.

/// The functions every script that refreshes an entry uses:
/// - `refresh(p, id, ttl, grace)`: the entry's TTL, and its text's and index's (by `grace` more);
/// - `list_for(p, owner, id, now, ttl, listmax)`: `id` listed for session `owner` (none if
///   empty), the list bounded to `listmax` ids and living `ttl`;
/// - `reissue(p, ckey, now, ttl, owner, origin, label, listmax, grace)`: the live id the content
///   key `ckey` names, if its entry has the same origin and label, refreshed (TTL, content key,
///   recency, listing); nil otherwise.
macro_rules! lua_prelude {
    () => {
        r#"
local function refresh(p, id, ttl, grace)
  redis.call('PEXPIRE', p .. 'e:' .. id, ttl)
  redis.call('PEXPIRE', p .. 't:' .. id, ttl + grace)
  redis.call('PEXPIRE', p .. 'x:' .. id, ttl + grace)
end
local function list_for(p, owner, id, now, ttl, listmax)
  if owner == '' then return end
  local o = p .. 'o:' .. owner
  redis.call('ZADD', o, now, id)
  redis.call('ZREMRANGEBYRANK', o, 0, -listmax - 1)
  redis.call('PEXPIRE', o, ttl)
end
local function reissue(p, ckey, now, ttl, owner, origin, label, listmax, grace)
  local id = redis.call('GET', ckey)
  if not id then return nil end
  local m = redis.call('HMGET', p .. 'e:' .. id, 'o', 'l')
  if (not m[1]) or m[1] ~= origin or m[2] ~= label then return nil end
  refresh(p, id, ttl, grace)
  redis.call('PEXPIRE', ckey, ttl)
  redis.call('ZADD', p .. 'lru', now, id)
  list_for(p, owner, id, now, ttl, listmax)
  return id
end
"#
    };
}

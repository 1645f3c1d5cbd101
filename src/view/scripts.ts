/**
 * The Lua the watcher's view writes run in Redis (each one atomic in the MULTI of its event or list page).
 * A pod field is added only while the App's hash holds fewer than the cap's pod fields (`Field.podCount`,
 * live pods and tombstones): a tenant's App may select any number of pods, the view holds at most the cap
 * of them; past it the hash is marked (`Field.tooMany`, under the writing list) and its App reads fresh.
 */
import { Field } from './keys.ts';

/** Room for a new pod field `ARGV[1]` under cap `ARGV[3]`; when there is none, the mark `ARGV[4]` is set and the script ends. */
const ROOM = `if ARGV[3] ~= '' and redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  if tonumber(redis.call('HGET', KEYS[1], '${Field.podCount}') or '0') >= tonumber(ARGV[3]) then
    redis.call('HSET', KEYS[1], '${Field.tooMany}', ARGV[4])
    return 0
  end
  redis.call('HINCRBY', KEYS[1], '${Field.podCount}', 1)
end
`;

/** Sets pod field ARGV[1] to ARGV[2] when it is there or there is room under the cap ARGV[3]. */
export const SET_CAPPED = `${ROOM}redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1`;

/**
 * Sets a tombstone (ARGV[1] = ARGV[2], a pod's under the cap ARGV[3]; '' for the App's), then removes the hash
 * when its App is gone (its entry a tombstone) and no field holds a live pod (an entry with an object): ebb's
 * write records and other tombstones go with it. Entries are told apart by how `entry.ts` starts them,
 * `{"l":"<id>","gone":` and `{"l":"<id>","o":`. No hash, no tombstone: a pod that goes after its App's hash
 * went (one the cap left out) does not bring the hash back.
 */
export const GONE = `if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
${ROOM}redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local app = redis.call('HGET', KEYS[1], '${Field.app}')
if not app or not string.find(app, '^{"l":"[^"]*","gone":') then return 0 end
for _, v in ipairs(redis.call('HVALS', KEYS[1])) do
  if string.find(v, '^{"l":"[^"]*","o":') then return 0 end
end
return redis.call('DEL', KEYS[1])`;

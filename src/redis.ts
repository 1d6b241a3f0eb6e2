// 'ferry/redis': the Redis (or Valkey) store. Needs the optional peer dependency ioredis.
export { RedisStore, parseRedisUrl, type RedisStoreOptions } from './store/redis/redis-store.js'
export { redisKeys, type RedisKeys } from './store/redis/keys.js'

// The baseline of `npm run bench`: what a hand-written lookup costs with no GraphQL and no framework.
// node:http + ioredis over the service's own key layout (src/store/redis/keys.ts): one GET of the
// event, one MGET of the author's and p-tagged profiles, the same response bytes as the service.
// BASELINE_BYTES=1: the same, reading values as Buffers and writing them as they are (no decoding
// into strings and encoding back), as the service does.
import { createServer } from 'node:http';
import { Redis } from 'ioredis';
// Regular events are stored packed (src/store/packed-event.ts): unpacked here as the service does.
import { unpackEvent } from '../../dist/store/packed-event.js';

const { REDIS_URL, REDIS_KEY_PREFIX = '', PORT, BASELINE_BYTES } = process.env;
const redis = new Redis(REDIS_URL);
const bytes = BASELINE_BYTES === '1';
const get = (key) => (bytes ? redis.getBuffer(key) : redis.get(key));
const mget = (keys) => (bytes ? redis.mgetBuffer(keys) : redis.mget(keys));
/** JSON pieces joined: one string, or (bytes) one Buffer. */
const join = (parts) => (bytes ? Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : part))) : parts.join(''));

function send(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

async function handle(req, res) {
  const url = new URL(req.url, 'http://localhost');
  if (url.pathname === '/event') {
    const held = await redis.getBuffer(`${REDIS_KEY_PREFIX}e:${url.searchParams.get('id')}`);
    const json = held === null ? null : bytes ? unpackEvent(held) : unpackEvent(held).toString();
    if (json === null) return send(res, 404, '{"error":"not found"}');
    const event = JSON.parse(json.toString());
    const pubkeys = [...new Set([event.pubkey, ...event.tags.filter((tag) => tag[0] === 'p').map((tag) => tag[1])])];
    const profiles = await mget(pubkeys.map((pubkey) => `${REDIS_KEY_PREFIX}r:0:${pubkey}`));
    const parts = ['{"event":', json, ',"profiles":{'];
    let separator = '';
    pubkeys.forEach((pubkey, index) => {
      if (profiles[index] === null) return;
      parts.push(`${separator}"${pubkey}":`, profiles[index]);
      separator = ',';
    });
    parts.push('}}');
    return send(res, 200, join(parts));
  }
  if (url.pathname === '/user-profile') {
    const json = await get(`${REDIS_KEY_PREFIX}r:0:${url.searchParams.get('pubkey')}`);
    return json === null ? send(res, 404, '{"error":"not found"}') : send(res, 200, join(['{"profile":', json, '}']));
  }
  return send(res, 404, '{"error":"no route"}');
}

createServer((req, res) => {
  handle(req, res).catch(() => send(res, 500, '{"error":"internal"}'));
}).listen(Number(PORT), '127.0.0.1', () => process.send?.('listening'));

// The ceiling of `npm run bench`: node:http answering a fixed body of a given size, no I/O at all.
import { createServer } from 'node:http';

const { PORT, BODY_BYTES } = process.env;
const body = Buffer.from(`{"pad":"${'x'.repeat(Math.max(0, Number(BODY_BYTES) - 10))}"}`);
createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
  res.end(body);
}).listen(Number(PORT), '127.0.0.1', () => process.send?.('listening'));
// Exit (not die) on SIGTERM, so that `node --cpu-prof` writes its profile (profile-lookup.ts --ceiling).
process.on('SIGTERM', () => process.exit(0));

/**
 * The download floor: undici streaming the same dump to nowhere, without
 * decoding, parsing or writing anything. No tap can be faster than this.
 * Usage: node floor.js URL TOKEN [gzip]
 */
import { request } from 'undici';

const [url, token, gzip] = process.argv.slice(2);
const response = await request(url, {
  headers: { authorization: `Bearer ${token}`, 'accept-encoding': gzip === 'gzip' ? 'gzip' : 'identity' },
});
if (response.statusCode !== 200) throw new Error(`floor: HTTP ${response.statusCode}`);
let bytes = 0;
for await (const chunk of response.body as AsyncIterable<Buffer>) bytes += chunk.length;
process.stderr.write(`floor: ${bytes} bytes\n`);

import { describe, expect, it } from 'vitest';
import { clientKey } from '../src/client-key.js';

describe('clientKey: who a client is, for per-client caps', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::ffff:10.1.2.3', '10.1.2.3'],
    ['2001:db8:1:2:aaaa::1', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:db8:1:3::1', '2001:db8:1:3::/64'],
    ['1.2.3.4:5678', '1.2.3.4'],
    ['[2001:db8:1:2::1]:443', '2001:db8:1:2::/64'],
    ['[::ffff:10.1.2.3]', '10.1.2.3'],
    ['not an address', 'unknown'],
    ['x'.repeat(16_000), 'unknown'],
    ['1.2.3.4, 5.6.7.8', 'unknown'],
  ])('%s → %s', (address, key) => {
    expect(clientKey(address)).toBe(key);
  });

  it('strings that are not addresses (a forged X-Forwarded-For) are one client, never a new key each', () => {
    const keys = new Set(Array.from({ length: 100 }, (_, n) => clientKey(`forged-${n}`)));
    expect(keys).toEqual(new Set(['unknown']));
  });

  it('one IPv6 host cannot be many clients by changing the low 64 bits', () => {
    const keys = new Set(Array.from({ length: 100 }, (_, n) => clientKey(`2001:db8:5:6::${n.toString(16)}`)));
    expect(keys.size).toBe(1);
  });
});

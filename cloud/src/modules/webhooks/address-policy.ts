// Which network addresses a webhook may reach. Tenants choose webhook URLs, so without this the service
// could be pointed at its own loopback, the cloud metadata endpoint or the private network (SSRF).
import net from 'node:net';

const blocked = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible form (::a.b.c.d)
  ['64:ff9b:1::', 48], // NAT64 for local use (RFC 8215)
  ['100::', 64], // discard-only
  ['2001::', 32], // Teredo: a tunnel, never a webhook endpoint
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(prefix, bits, 'ipv6');
}

/** The 16 bytes of a valid IPv6 literal (as `net.isIPv6` accepts it, zone id excluded). */
function ipv6Bytes(ip: string): Buffer {
  const [head = '', tail] = ip.split('::') as [string, string | undefined];
  const groups = (part: string) => {
    if (part === '') return [];
    const out: number[] = [];
    for (const g of part.split(':')) {
      if (g.includes('.')) {
        const [a, b, c, d] = g.split('.').map(Number) as [number, number, number, number];
        out.push((a << 8) | b, (c << 8) | d);
      } else out.push(parseInt(g, 16));
    }
    return out;
  };
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  const bytes = Buffer.alloc(16);
  all.forEach((g, i) => bytes.writeUInt16BE(g, i * 2));
  return bytes;
}

const ipv4At = (b: Buffer, offset: number) => Array.from(b.subarray(offset, offset + 4)).join('.');

/**
 * The IPv4 address an IPv6 address stands for, when its prefix is one that carries an IPv4 address
 * to somewhere: IPv4-mapped (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96), NAT64 (64:ff9b::/96)
 * and 6to4 (2002::/16). Such an address is judged by the IPv4 address inside it.
 */
function embeddedIpv4(ip: string): string | undefined {
  const b = ipv6Bytes(ip);
  const zero = (from: number, to: number) => b.subarray(from, to).every((x) => x === 0);
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return ipv4At(b, 12);
  if (zero(0, 8) && b[8] === 0xff && b[9] === 0xff && zero(10, 12)) return ipv4At(b, 12);
  if (b.readUInt32BE(0) === 0x0064ff9b && zero(4, 12)) return ipv4At(b, 12);
  if (b.readUInt16BE(0) === 0x2002) return ipv4At(b, 2);
  return undefined;
}

/** True when `ip` (a literal address) is on the public internet. */
export function isPublicAddress(ip: string): boolean {
  const family = net.isIP(ip);
  if (family === 0) return false;
  if (family === 4) return !blocked.check(ip, 'ipv4');
  const inner = embeddedIpv4(ip);
  if (inner !== undefined) return isPublicAddress(inner);
  return !blocked.check(ip, 'ipv6');
}

/** True for a literal IP address (brackets allowed) that a webhook must never reach. */
export function isPrivateAddress(address: string): boolean {
  const ip = address.replace(/^\[|\]$/g, '');
  return net.isIP(ip) !== 0 && !isPublicAddress(ip);
}

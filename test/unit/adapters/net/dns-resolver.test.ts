import { pbkdf2 } from 'node:crypto';
import { type Socket, createSocket } from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SystemResolver, readHostsFile } from '../../../../functions/adapters/net/dns-resolver';

/** A DNS server on loopback UDP: answers A queries from `a` and AAAA queries from `aaaa` (others, or an empty address: no records), NXDOMAIN for names in neither, or stays silent. */
async function dnsServer(opts: { a: Record<string, string>; aaaa?: Record<string, string>; silent?: boolean }): Promise<{ server: string; close: () => void; queries: string[] }> {
  const socket: Socket = createSocket('udp4');
  const queries: string[] = [];
  socket.on('message', (query, peer) => {
    let offset = 12;
    const labels: string[] = [];
    while (query[offset] !== 0) {
      labels.push(query.subarray(offset + 1, offset + 1 + query[offset]).toString('ascii'));
      offset += query[offset] + 1;
    }
    const name = labels.join('.').toLowerCase();
    const type = query.readUInt16BE(offset + 1);
    queries.push(`${name}/${type === 1 ? 'A' : type === 28 ? 'AAAA' : type}`);
    if (opts.silent) return;
    const question = query.subarray(12, offset + 5);
    const known = name in opts.a || name in (opts.aaaa ?? {});
    const address = type === 1 ? opts.a[name] : type === 28 ? opts.aaaa?.[name] : undefined;
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    const answers = address ? 1 : 0;
    header.writeUInt16BE(known ? 0x8180 : 0x8183, 2); // response, recursion available; rcode 3 = NXDOMAIN
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers, 6);
    const answer = address
      ? type === 1
        ? Buffer.concat([Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4]), Buffer.from(address.split('.').map(Number))])
        : Buffer.concat([Buffer.from([0xc0, 0x0c, 0, 28, 0, 1, 0, 0, 0, 60, 0, 16]), ipv6Bytes(address)])
      : Buffer.alloc(0);
    socket.send(Buffer.concat([header, question, answer]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { server: `127.0.0.1:${socket.address().port}`, close: () => socket.close(), queries };
}

/** The 16 bytes of a full or `::`-shortened IPv6 address. */
function ipv6Bytes(address: string): Buffer {
  const [head, tail = ''] = address.split('::');
  const groups = (part: string) => (part ? part.split(':') : []);
  const all = [...groups(head), ...Array(8 - groups(head).length - groups(tail).length).fill('0'), ...groups(tail)];
  return Buffer.from(all.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff]));
}

describe('SystemResolver', () => {
  it('asks the DNS server for IPv4 and IPv6 and returns the answers; a name without records gives none', async () => {
    const dns = await dnsServer({
      a: { 'docs.example.com': '93.184.216.34', 'empty.example.com': '', 'dual.example.com': '93.184.216.35' },
      aaaa: { 'dual.example.com': '2001:db8::35', 'six.example.com': '2001:db8::6' },
    });
    try {
      const resolver = new SystemResolver({ servers: [dns.server], hostsFile: null });
      expect(await resolver.resolve('Docs.Example.com.')).toEqual([{ address: '93.184.216.34', family: 4 }]);
      expect(dns.queries).toEqual(expect.arrayContaining(['docs.example.com/A', 'docs.example.com/AAAA']));
      expect(await resolver.resolve('empty.example.com')).toEqual([]);
      // IPv6 answers too, after the IPv4 ones; a name with only IPv6 records resolves to them.
      expect(await resolver.resolve('dual.example.com')).toEqual([{ address: '93.184.216.35', family: 4 }, { address: '2001:db8::35', family: 6 }]);
      expect(await resolver.resolve('six.example.com')).toEqual([{ address: '2001:db8::6', family: 6 }]);
      await expect(resolver.resolve('missing.example.com')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    } finally {
      dns.close();
    }
  });

  it('gives up on a server that never answers, without holding a thread of the pool file and crypto work share', async () => {
    const dns = await dnsServer({ a: {}, silent: true });
    try {
      const resolver = new SystemResolver({ servers: [dns.server], hostsFile: null, timeoutMs: 300, tries: 1 });
      const order: string[] = [];
      // More hanging lookups than libuv has pool threads (4): getaddrinfo would take every one of them.
      const lookups = Array.from({ length: 8 }, (_, i) =>
        resolver.resolve(`slow${i}.example.com`).then(
          () => order.push('answered'),
          (err: { code?: string }) => order.push(`lookup ${err.code}`),
        ),
      );
      await new Promise<void>((resolve, reject) => pbkdf2('pw', 'salt', 1, 32, 'sha256', (err) => (err ? reject(err) : (order.push('pool work'), resolve()))));
      await Promise.all(lookups);
      expect(order[0]).toBe('pool work');
      expect(order.slice(1)).toEqual(Array(8).fill('lookup ETIMEOUT'));
    } finally {
      dns.close();
    }
  });

  it('answers names from the hosts file first, as getaddrinfo does', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hosts-'));
    try {
      const file = path.join(dir, 'hosts');
      writeFileSync(file, '# comment\n127.0.0.1 localhost box # trailing\n::1 localhost ip6-localhost\n10.0.0.5 Intranet.Local\nnot-an-ip name\n');
      expect(readHostsFile(file).get('localhost')).toEqual([{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }]);
      const dns = await dnsServer({ a: {} });
      try {
        const resolver = new SystemResolver({ servers: [dns.server], hostsFile: file });
        expect(await resolver.resolve('intranet.local')).toEqual([{ address: '10.0.0.5', family: 4 }]);
        expect(await resolver.resolve('BOX')).toEqual([{ address: '127.0.0.1', family: 4 }]);
        expect(dns.queries).toEqual([]);
        expect(readHostsFile(path.join(dir, 'absent')).size).toBe(0);
      } finally {
        dns.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

import dgram from 'node:dgram';
import net from 'node:net';
import { Resolver } from 'node:dns/promises';

/**
 * A tiny authoritative DNS server over real UDP on 127.0.0.1 (port 0): answers A and AAAA queries from
 * a table, NXDOMAIN for anything else. Enough of RFC 1035 for node's resolver (one question, no
 * compression beyond a pointer to the question name).
 */
export class FakeDnsServer {
  readonly queries: string[] = [];

  private constructor(
    private readonly socket: dgram.Socket,
    private readonly records: Record<string, string[]>,
  ) {}

  static async start(records: Record<string, string[]>): Promise<FakeDnsServer> {
    const socket = dgram.createSocket('udp4');
    const server = new FakeDnsServer(socket, records);
    socket.on('message', (msg, rinfo) => socket.send(server.answer(msg), rinfo.port, rinfo.address));
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return server;
  }

  get address(): string {
    return `127.0.0.1:${this.socket.address().port}`;
  }

  /** A resolver that asks only this server. */
  resolver(): Resolver {
    const r = new Resolver({ timeout: 1000, tries: 1 });
    r.setServers([this.address]);
    return r;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }

  private answer(query: Buffer): Buffer {
    let offset = 12;
    const labels: string[] = [];
    while (query[offset]! > 0) {
      const len = query[offset]!;
      labels.push(query.subarray(offset + 1, offset + 1 + len).toString('ascii'));
      offset += len + 1;
    }
    const questionEnd = offset + 5;
    const name = labels.join('.').toLowerCase();
    const qtype = query.readUInt16BE(offset + 1);
    this.queries.push(`${name} ${qtype === 28 ? 'AAAA' : qtype === 1 ? 'A' : qtype}`);
    const known = name in this.records;
    const addresses = (this.records[name] ?? []).filter((a) => (qtype === 1 ? net.isIPv4(a) : qtype === 28 ? net.isIPv6(a) : false));
    const header = Buffer.alloc(12);
    header.writeUInt16BE(query.readUInt16BE(0), 0); // id
    header.writeUInt16BE(0x8400 | (known ? 0 : 3), 2); // response, authoritative, NXDOMAIN when unknown
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(addresses.length, 6);
    const answers = addresses.map((a) => {
      const rdata = net.isIPv4(a) ? Buffer.from(a.split('.').map(Number)) : ipv6Bytes(a);
      const rr = Buffer.alloc(12);
      rr.writeUInt16BE(0xc00c, 0); // pointer to the question name
      rr.writeUInt16BE(qtype, 2);
      rr.writeUInt16BE(1, 4); // IN
      rr.writeUInt32BE(5, 6); // TTL
      rr.writeUInt16BE(rdata.length, 10);
      return Buffer.concat([rr, rdata]);
    });
    return Buffer.concat([header, query.subarray(12, questionEnd), ...answers]);
  }
}

function ipv6Bytes(address: string): Buffer {
  const [head, tail = ''] = address.split('::');
  const parse = (part: string) => (part ? part.split(':') : []);
  let groups = [...parse(head!), ...parse(tail)];
  const last = groups.at(-1);
  if (last?.includes('.')) {
    const [a, b, c, d] = last.split('.').map(Number);
    groups = [...groups.slice(0, -1), ((a! << 8) | b!).toString(16), ((c! << 8) | d!).toString(16)];
  }
  const missing = 8 - groups.length;
  const full = address.includes('::') ? [...parse(head!), ...Array(missing).fill('0'), ...groups.slice(parse(head!).length)] : groups;
  const buf = Buffer.alloc(16);
  full.forEach((g, i) => buf.writeUInt16BE(parseInt(g, 16), i * 2));
  return buf;
}

import t from 'tap';
import {
  classifyAddress,
  literalHostVerdict,
  type ResolvedAddress,
  resolveTarget,
  TargetRefusedError,
} from '../../../../plugins/app/webhooks/ssrf.js';

// The address guard of outbound webhooks. Every name here is answered by a stub resolver: these
// tests make no DNS query and open no connection.

const REFUSED: [string, string][] = [
  // IPv4
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.0.1', 'private'],
  ['192.168.255.255', 'private'],
  ['169.254.0.1', 'link-local'],
  ['169.254.169.254', 'metadata'],
  ['169.254.170.2', 'link-local'],
  ['168.63.129.16', 'metadata'],
  ['100.100.100.200', 'metadata'],
  ['192.0.0.192', 'metadata'],
  ['100.64.0.1', 'cgnat'],
  ['100.127.255.255', 'cgnat'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['254.1.2.3', 'reserved'],
  ['255.255.255.255', 'broadcast'],
  ['192.0.2.1', 'documentation'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.9', 'documentation'],
  ['198.18.0.1', 'benchmarking'],
  ['192.88.99.1', 'reserved'],
  // IPv6
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['::', 'unspecified'],
  ['fc00::1', 'private'],
  ['fd12:3456:789a::1', 'private'],
  ['fd00:ec2::254', 'metadata'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['febf:ffff::1', 'link-local'],
  ['fec0::1', 'site-local'],
  ['ff00::1', 'multicast'],
  ['ff02::1', 'multicast'],
  ['2001:db8::1', 'documentation'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'], // Teredo
  ['100::1', 'reserved'],
  ['::127.0.0.1', 'reserved'], // the deprecated IPv4-compatible form
  ['1::', 'reserved'],
  ['4000::1', 'reserved'],
  // IPv4 inside IPv6
  ['::ffff:127.0.0.1', 'ipv4-mapped loopback'],
  ['::ffff:7f00:1', 'ipv4-mapped loopback'],
  ['0:0:0:0:0:FFFF:7F00:0001', 'ipv4-mapped loopback'],
  ['::ffff:10.0.0.1', 'ipv4-mapped private'],
  ['::ffff:a9fe:a9fe', 'ipv4-mapped metadata'],
  ['::ffff:0.0.0.0', 'ipv4-mapped unspecified'],
  ['64:ff9b::10.0.0.1', 'nat64 private'],
  ['64:ff9b::7f00:1', 'nat64 loopback'],
  ['64:ff9b::a9fe:a9fe', 'nat64 metadata'],
  ['64:ff9b:1::a00:1', 'reserved'], // local-use NAT64
  ['2002:7f00:1::1', '6to4 loopback'],
  ['2002:c0a8:101::1', '6to4 private'],
  // Not an address at all
  ['', 'invalid'],
  ['localhost', 'invalid'],
  ['127.1', 'invalid'],
  ['0x7f000001', 'invalid'],
  ['010.0.0.1', 'invalid'],
  ['1.2.3.4.5', 'invalid'],
];

const ALLOWED = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.215.14',
  '100.63.255.255', // just below CGNAT
  '100.128.0.0', // just above
  '172.15.255.255',
  '172.32.0.0',
  '169.253.255.255',
  '223.255.255.255',
  '2001:4860:4860::8888',
  '2606:4700:4700::1111',
  '[2001:4860:4860::8888]',
  '::ffff:8.8.8.8',
  '::ffff:808:808',
  '64:ff9b::808:808',
  '2002:808:808::1',
];

t.test('every refused range, with its reason', async (t) => {
  for (const [address, reason] of REFUSED)
    t.same(classifyAddress(address), { allowed: false, reason }, `${address || '(empty)'} is ${reason}`);
});

t.test('public addresses are allowed', async (t) => {
  for (const address of ALLOWED) t.same(classifyAddress(address), { allowed: true }, address);
});

t.test('registration: literal hosts in every spelling the URL parser accepts', async (t) => {
  const cases: [string, string | null][] = [
    ['http://127.0.0.1/', 'loopback'],
    ['http://2130706433/', 'loopback'],
    ['http://0x7f.1/', 'loopback'],
    ['http://0x7f000001/', 'loopback'],
    ['http://0177.0.0.1/', 'loopback'],
    ['http://127.1/', 'loopback'],
    ['http://127.0.0.1./', 'loopback'],
    ['https://0/', 'unspecified'],
    ['https://0xa9fea9fe/latest/meta-data/', 'metadata'],
    ['https://169.254.169.254/latest/meta-data/', 'metadata'],
    ['https://[::1]:8443/hooks', 'loopback'],
    ['https://[::]/', 'unspecified'],
    ['https://[::ffff:127.0.0.1]/', 'ipv4-mapped loopback'],
    ['https://[::ffff:7f00:1]/', 'ipv4-mapped loopback'],
    ['https://[0:0:0:0:0:ffff:10.0.0.1]/', 'ipv4-mapped private'],
    ['https://[64:ff9b::192.168.1.1]/', 'nat64 private'],
    ['https://[fd00::1]/', 'private'],
    ['https://[FE80::1]/', 'link-local'],
    ['https://user:pass@10.1.2.3:9000/x?y=1', 'private'],
    ['not a url', 'invalid url'],
    ['https://[fe80::1%25eth0]/', 'invalid url'], // the URL parser refuses zones
    ['https://256.0.0.1/', 'invalid url'],
    ['ftp://127.0.0.1/', 'unsupported scheme'],
    ['javascript:alert(1)', 'unsupported scheme'],
  ];
  for (const [url, reason] of cases) t.same(literalHostVerdict(url), { allowed: false, reason }, `${url}: ${reason}`);

  for (const url of ['https://8.8.8.8/hooks', 'https://[2001:4860:4860::8888]/', 'http://1.1.1.1:8080/'])
    t.same(literalHostVerdict(url), { allowed: true }, `${url}: allowed`);
  // Names are left to delivery, which resolves them: even those that will surely be refused then.
  for (const url of [
    'https://hooks.example.com/in',
    'https://localhost/',
    'https://127.0.0.1.nip.io/',
    'https://xn--nxasmq6b.com/',
  ])
    t.equal(literalHostVerdict(url), null, `${url}: a name`);
});

/** A resolver that answers from a table and counts what it was asked. */
function stubResolver(answers: Record<string, string[]>) {
  const asked: string[] = [];
  const resolve = async (host: string): Promise<ResolvedAddress[]> => {
    asked.push(host);
    const found = answers[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { resolve, asked };
}

async function refusal(promise: Promise<unknown>): Promise<TargetRefusedError | undefined> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TargetRefusedError) return error;
    throw error;
  }
  return undefined;
}

t.test('a name that resolves to a private address is refused', async (t) => {
  const { resolve, asked } = stubResolver({ 'hooks.example': ['10.1.2.3'], 'v6.example': ['::ffff:a00:1'] });
  const error = await refusal(resolveTarget('hooks.example', { allowPrivate: false, resolve }));
  t.ok(error, 'refused');
  t.equal(error?.reason, 'private');
  t.equal(error?.address, '10.1.2.3');
  t.match(error?.message, /10\.1\.2\.3 is private/);
  const mapped = await refusal(resolveTarget('v6.example', { allowPrivate: false, resolve }));
  t.equal(mapped?.reason, 'ipv4-mapped private', 'an AAAA answer that maps a private IPv4 address');
  t.same(asked, ['hooks.example', 'v6.example']);
});

t.test('one refused answer among public ones refuses the name', async (t) => {
  const { resolve } = stubResolver({
    'mixed.example': ['93.184.215.14', '127.0.0.1'],
    'mixed6.example': ['2606:4700:4700::1111', 'fe80::1', '8.8.8.8'],
    'last.example': ['8.8.8.8', '1.1.1.1', '169.254.169.254'],
  });
  for (const [host, reason, address] of [
    ['mixed.example', 'loopback', '127.0.0.1'],
    ['mixed6.example', 'link-local', 'fe80::1'],
    ['last.example', 'metadata', '169.254.169.254'],
  ] as const) {
    const error = await refusal(resolveTarget(host, { allowPrivate: false, resolve }));
    t.equal(error?.reason, reason, `${host}: ${reason}`);
    t.equal(error?.address, address);
  }
});

t.test('an all-public name answers its first address, to pin the connection to', async (t) => {
  const { resolve } = stubResolver({ 'ok.example': ['2606:4700:4700::1111', '1.1.1.1'], 'v4.example': ['8.8.8.8'] });
  t.same(await resolveTarget('ok.example', { allowPrivate: false, resolve }), {
    address: '2606:4700:4700::1111',
    family: 6,
  });
  t.same(await resolveTarget('v4.example', { allowPrivate: false, resolve }), { address: '8.8.8.8', family: 4 });
});

t.test('literal hosts are judged without resolving', async (t) => {
  const { resolve, asked } = stubResolver({});
  t.same(await resolveTarget('8.8.8.8', { allowPrivate: false, resolve }), { address: '8.8.8.8', family: 4 });
  t.same(await resolveTarget('[2001:4860:4860::8888]', { allowPrivate: false, resolve }), {
    address: '2001:4860:4860::8888',
    family: 6,
  });
  t.equal((await refusal(resolveTarget('[::1]', { allowPrivate: false, resolve })))?.reason, 'loopback');
  t.equal(
    (await refusal(resolveTarget('[::ffff:7f00:1]', { allowPrivate: false, resolve })))?.reason,
    'ipv4-mapped loopback',
  );
  t.same(await resolveTarget('127.0.0.1', { allowPrivate: true, resolve }), { address: '127.0.0.1', family: 4 });
  t.same(asked, [], 'the resolver was never asked');
});

t.test('allowPrivate lets private answers through, never a malformed one', async (t) => {
  const { resolve } = stubResolver({ 'dev.example': ['127.0.0.1', '10.0.0.1'], 'junk.example': ['not-an-ip'] });
  t.same(await resolveTarget('dev.example', { allowPrivate: true, resolve }), { address: '127.0.0.1', family: 4 });
  const error = await refusal(resolveTarget('junk.example', { allowPrivate: true, resolve }));
  t.equal(error?.reason, 'invalid');
});

t.test('a name that does not resolve, or resolves to nothing, is an error, not a refusal', async (t) => {
  const { resolve } = stubResolver({ 'empty.example': [] });
  await t.rejects(resolveTarget('nowhere.example', { allowPrivate: false, resolve }), { code: 'ENOTFOUND' });
  await t.rejects(resolveTarget('empty.example', { allowPrivate: false, resolve }), /resolves to no address/);
});

t.test('the default resolver is the system one: localhost is refused', async (t) => {
  // localhost is answered from /etc/hosts (or the resolver's own rule): no query leaves the machine.
  const error = await refusal(resolveTarget('localhost', { allowPrivate: false }));
  t.ok(error, 'refused');
  t.match(error?.reason, /loopback/);
});

/** Which addresses a check or a notification may dial, in each network scope; IPv6 forms that carry IPv4 judged by it. */
import { describe, expect, it } from 'vitest';
import { addressRefusal } from '../../../src/workers/egress/addresses.ts';
import { judgedAddress } from '../../../src/workers/egress/connector.ts';

describe('address classes', () => {
  it.each([
    ['127.0.0.1', 'a loopback address'],
    ['127.8.9.10', 'a loopback address'],
    ['::1', 'a loopback address'],
    ['::ffff:127.0.0.1', 'a loopback address'],
    ['::ffff:7f00:1', 'a loopback address'],
    ['::127.0.0.1', 'a loopback address'],
    ['169.254.169.254', 'a cloud metadata address'],
    ['169.254.170.2', 'a cloud metadata address'],
    ['::ffff:169.254.169.254', 'a cloud metadata address'],
    ['64:ff9b::a9fe:a9fe', 'a cloud metadata address'],
    ['fd00:ec2::254', 'a cloud metadata address'],
    ['100.100.100.200', 'a cloud metadata address'],
    ['169.254.1.1', 'a link-local address'],
    ['fe80::1', 'a link-local address'],
    ['fe80::1%eth0', 'a link-local address'],
    ['febf::1', 'a link-local address'],
    ['0.0.0.0', 'an unspecified address'],
    ['0.1.2.3', 'an unspecified address'],
    ['::', 'an unspecified address'],
    ['224.0.0.1', 'a multicast address'],
    ['ff02::1', 'a multicast address'],
    ['255.255.255.255', 'a reserved address'],
    ['240.0.0.1', 'a reserved address'],
    ['10.1.2.3', 'a private address'],
    ['172.16.0.1', 'a private address'],
    ['172.31.255.255', 'a private address'],
    ['192.168.1.1', 'a private address'],
    ['100.64.0.1', 'a private address'],
    ['fd12:3456::1', 'a private address'],
    ['::ffff:10.0.0.1', 'a private address'],
  ])('%s is %s in public scope', (address, why) => {
    expect(addressRefusal(address, 'public')).toBe(why);
  });

  it.each(['8.8.8.8', '172.32.0.1', '100.128.0.1', '2001:4860:4860::8888', '::ffff:8.8.8.8'])('%s is public', (address) => {
    for (const scope of ['public', 'private', 'local'] as const) expect(addressRefusal(address, scope)).toBeUndefined();
  });

  it('private scope adds private ranges; local scope adds loopback; nothing adds metadata, link-local, unspecified or multicast', () => {
    expect(addressRefusal('10.0.0.1', 'private')).toBeUndefined();
    expect(addressRefusal('fd00::1', 'private')).toBeUndefined();
    expect(addressRefusal('127.0.0.1', 'private')).toBe('a loopback address');
    expect(addressRefusal('::ffff:127.0.0.1', 'private')).toBe('a loopback address');
    expect(addressRefusal('127.0.0.1', 'local')).toBeUndefined();
    expect(addressRefusal('::1', 'local')).toBeUndefined();
    for (const a of ['169.254.169.254', 'fd00:ec2::254', 'fe80::1', '0.0.0.0', '::', '224.0.0.251', 'ff02::fb'])
      expect(addressRefusal(a, 'local'), a).toBeDefined();
  });
});

describe('judging a host', () => {
  const resolver = (answers: Record<string, string[]>) => (host: string) => Promise.resolve(answers[host] ?? []);

  it('a name that resolves to loopback is refused; its addresses are judged, not its name', async () => {
    const resolve = resolver({ 'metrics.example': ['127.0.0.1'], 'public.example': ['93.184.215.14'], 'mixed.example': ['93.184.215.14', '::1'] });
    await expect(judgedAddress('metrics.example', 'private', resolve)).rejects.toMatchObject({
      code: 'AddressRefused',
      message: 'metrics.example resolves to a loopback address, which may not be called (EBB_CHECK_NETWORKS=private)',
    });
    expect(await judgedAddress('public.example', 'private', resolve)).toBe('93.184.215.14');
    // Any refused address refuses the name: no order of attempts reaches it.
    await expect(judgedAddress('mixed.example', 'private', resolve)).rejects.toMatchObject({ code: 'AddressRefused' });
    await expect(judgedAddress('nothing.example', 'private', resolve)).rejects.toMatchObject({ code: 'ConnectFailed' });
  });

  it('an IP literal is judged as it is, bracketed IPv6 included, without resolving', async () => {
    const resolve = () => Promise.reject(new Error('not resolved'));
    await expect(judgedAddress('[::ffff:169.254.169.254]', 'local', resolve)).rejects.toMatchObject({
      message: expect.stringContaining('is a cloud metadata address') as string,
    });
    expect(await judgedAddress('[::1]', 'local', resolve)).toBe('::1');
  });
});

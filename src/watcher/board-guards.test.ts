import { describe, expect, it } from 'vitest';
import { guardRequest, loopbackHost, sameOrigin } from './board-guards.ts';

describe('sameOrigin', () => {
  it.each<[string, Record<string, string>, boolean]>([
    ['the same host and port', { host: 'board.example:8080', origin: 'http://board.example:8080' }, true],
    ['behind TLS on the default port', { host: 'board.example', origin: 'https://board.example' }, true],
    ['host names differing in case only', { host: 'Board.Example:8080', origin: 'http://board.example:8080' }, true],
    ['a Referer when there is no Origin', { host: '127.0.0.1:8080', referer: 'http://127.0.0.1:8080/board/queue/reconcile' }, true],
    ['another site', { host: 'board.example:8080', origin: 'http://evil.example:8080' }, false],
    ['another port', { host: 'board.example:8080', origin: 'http://board.example:8081' }, false],
    ['an opaque origin', { host: 'board.example', origin: 'null' }, false],
    ['neither Origin nor Referer', { host: 'board.example' }, false],
    ['no Host', { origin: 'http://board.example' }, false],
    ['a Host with credentials or a path', { host: 'a@board.example', origin: 'http://board.example' }, false],
    ['a non-web scheme', { host: 'board.example', origin: 'file://board.example' }, false],
  ])('%s: %s', (_what, headers, ok) => {
    expect(sameOrigin(headers)).toBe(ok);
  });
});

describe('loopbackHost', () => {
  it.each<[string | undefined, boolean]>([
    ['localhost:8080', true],
    ['127.0.0.1:8080', true],
    ['[::1]:8080', true],
    ['LOCALHOST', true],
    ['localhost:9999', true],
    ['evil.example:8080', false],
    ['localhost.evil.example:8080', false],
    ['127.0.0.2:8080', false],
    [undefined, false],
  ])('%s → %s', (host, ok) => {
    expect(loopbackHost(host === undefined ? {} : { host })).toBe(ok);
  });
});

describe('guardRequest', () => {
  const local = { host: '127.0.0.1:8080' };
  it('lets reads through, and writes from the board itself', () => {
    expect(guardRequest('GET', local, { loopbackOnly: true })).toBeUndefined();
    expect(guardRequest('PUT', { ...local, origin: 'http://127.0.0.1:8080' }, { loopbackOnly: true })).toBeUndefined();
  });

  it('refuses a write from another origin, or without one', () => {
    for (const method of ['PUT', 'POST', 'DELETE', 'PATCH']) {
      expect(guardRequest(method, { ...local, origin: 'http://evil.example' }, { loopbackOnly: false })?.status).toBe(403);
      expect(guardRequest(method, local, { loopbackOnly: false })?.status).toBe(403);
    }
  });

  it('refuses a rebound name on a board without credentials, and only there', () => {
    expect(guardRequest('GET', { host: 'evil.example:8080' }, { loopbackOnly: true })?.status).toBe(403);
    expect(guardRequest('GET', { host: 'board.example:8080' }, { loopbackOnly: false })).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { parseCriEndpoint, unixEndpoint } from './endpoint.ts';
import { isCriError } from './errors.ts';

describe('parseCriEndpoint', () => {
  it('returns the socket path of a unix:/// endpoint', () => {
    expect(parseCriEndpoint('unix:///run/containerd/containerd.sock')).toBe('/run/containerd/containerd.sock');
    expect(parseCriEndpoint('unix:///tmp/a/../b.sock')).toBe('/tmp/b.sock');
  });

  it.each([
    ['', /no unix:\/\/ scheme/],
    ['/run/containerd/containerd.sock', /no unix:\/\/ scheme/],
    ['tcp://127.0.0.1:10010', /tcp:\/\/ scheme is not supported/],
    ['npipe:////./pipe/containerd-containerd', /npipe:\/\/ scheme is not supported/],
    ['unix://run/containerd/containerd.sock', /must be absolute/],
    ['unix://', /must be absolute/],
    ['unix:///run/containerd/', /not a socket path/],
    [`unix:///tmp/${'x'.repeat(120)}.sock`, /is 130 bytes; the limit is 103/],
  ])('rejects %j with InvalidEndpoint', (endpoint, message) => {
    let caught: unknown;
    try {
      parseCriEndpoint(endpoint);
    } catch (err) {
      caught = err;
    }
    expect(isCriError(caught, 'InvalidEndpoint')).toBe(true);
    expect(isCriError(caught) && caught.retryClass).toBe('permanent');
    expect((caught as Error).message).toMatch(message);
  });

  it('builds the endpoint of a socket path', () => {
    expect(unixEndpoint('/run/x.sock')).toBe('unix:///run/x.sock');
    expect(parseCriEndpoint(unixEndpoint('rel/x.sock'))).toBe(`${process.cwd()}/rel/x.sock`);
  });
});

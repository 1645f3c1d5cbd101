/**
 * KubeRest's protobuf reads against a scripted local HTTP server: protobuf is asked for (JSON second) only by
 * a client that reads protobuf and a caller that can decode it; the answer is read by its Content-Type, so a
 * server that answers JSON is read as JSON; an error answered in protobuf is a typed KubeError.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isKubeError } from './errors.ts';
import type { KubeConfig } from './kubeconfig.ts';
import { core } from './paths.ts';
import { messageType } from './protobuf/codec.ts';
import { ACCEPT_PROTOBUF, decodePod, decodePodList, PROTOBUF } from './protobuf/envelope.ts';
import { KubeRest } from './rest.ts';

type Reply = (req: IncomingMessage, res: ServerResponse) => void;

let server: Server;
let url = '';
let replies: Reply[] = [];
let accepts: (string | undefined)[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    accepts.push(req.headers.accept);
    (replies.shift() ?? ((_q, r) => r.writeHead(500).end()))(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(() => {
  server.closeAllConnections();
  replies = [];
  accepts = [];
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function client(protobuf: boolean): KubeRest {
  const config: KubeConfig = { source: 'test', server: url, tls: {}, proxyUrl: undefined, credentials: () => Promise.resolve({ headers: {} }) };
  return new KubeRest(config, { protobuf });
}

function wire(kind: string, name: string, value: object): Buffer {
  const type = messageType(name);
  const unknown = messageType('Unknown');
  const raw = type.encode(type.fromObject(value)).finish();
  return Buffer.concat([Buffer.from('k8s\0', 'latin1'), unknown.encode(unknown.fromObject({ typeMeta: { apiVersion: 'v1', kind }, raw })).finish()]);
}

const protobufReply =
  (status: number, kind: string, name: string, value: object): Reply =>
  (_req, res) =>
    res.writeHead(status, { 'content-type': PROTOBUF }).end(wire(kind, name, value));

const jsonReply =
  (status: number, body: unknown): Reply =>
  (_req, res) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

describe('KubeRest protobuf reads', () => {
  it('asks for protobuf first and decodes a protobuf answer', async () => {
    replies = [protobufReply(200, 'PodList', 'PodList', { metadata: { resourceVersion: '9' }, items: [{ metadata: { name: 'web-0' } }] })];
    const list = await client(true).list(core('pods', 'shop'), { labelSelector: 'app=web' }, undefined, undefined, decodePodList);
    expect(accepts).toEqual([ACCEPT_PROTOBUF]);
    expect(list.items).toEqual([{ metadata: { name: 'web-0' } }]);
    expect(list.metadata.resourceVersion).toBe('9');
  });

  it('reads a JSON answer as JSON (a server or proxy that does not speak protobuf)', async () => {
    replies = [jsonReply(200, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-0', managedFields: [] } })];
    const pod = await client(true).get(core('pods', 'shop', 'web-0'), undefined, decodePod);
    expect(accepts).toEqual([ACCEPT_PROTOBUF]);
    expect(pod.metadata).toEqual({ name: 'web-0', managedFields: [] });
  });

  it('asks for JSON when the client reads no protobuf, or the caller cannot decode it', async () => {
    replies = [jsonReply(200, { metadata: {}, items: [] }), jsonReply(200, { metadata: { name: 'x' } })];
    await client(false).list(core('pods', 'shop'), {}, undefined, undefined, decodePodList);
    await client(true).get(core('configmaps', 'shop', 'x'));
    expect(accepts).toEqual(['application/json', 'application/json']);
  });

  it('turns an error answered in protobuf into a typed KubeError', async () => {
    replies = [protobufReply(404, 'Status', 'Status', { status: 'Failure', reason: 'NotFound', message: 'pods "web-9" not found', code: 404 })];
    const err: unknown = await client(true)
      .get(core('pods', 'shop', 'web-9'), undefined, decodePod)
      .catch((e: unknown) => e);
    expect(isKubeError(err, 'NotFound')).toBe(true);
    expect((err as Error).message).toContain('pods "web-9" not found');
  });

  it('refuses a protobuf answer to a request that asked for JSON', async () => {
    replies = [protobufReply(200, 'Pod', 'Pod', { metadata: { name: 'web-0' } })];
    await expect(client(true).get(core('pods', 'shop', 'web-0'))).rejects.toThrow(/did not ask for one/);
  });
});

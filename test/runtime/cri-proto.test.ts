import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTO_FILES } from '../../src/cri/load.ts';
import { criApiVersion, upstreamCriProto } from './cri-api.ts';
import { compareProtos } from './proto-compare.ts';

/** ebb's CRI proto files against the published runtime.v1 definition of the Kubernetes version ebb builds. */
describe('CRI proto files', () => {
  let upstream: string;
  let tmp: string;

  beforeAll(async () => {
    upstream = await upstreamCriProto(await criApiVersion(), AbortSignal.timeout(120_000));
    tmp = await mkdtemp(path.join(os.tmpdir(), 'ebb-proto-'));
  }, 150_000);

  afterAll(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('declare every message, field and rpc with the published names, numbers, types and labels', () => {
    expect(compareProtos(PROTO_FILES, upstream)).toEqual([]);
  });

  it('are compared closely enough to catch a wrong field number, type or label', async () => {
    const imageProto = PROTO_FILES.find((f) => f.endsWith('image-service.proto'))!;
    const broken = (await readFile(imageProto, 'utf8'))
      .replace('string user_specified_image = 18;', 'string user_specified_image = 17;')
      .replace('uint64 size = 4;', 'int64 size = 4;')
      .replace('repeated string repo_tags = 2;', 'string repo_tags = 2;');
    const copy = path.join(tmp, 'image-service.proto');
    await writeFile(copy, broken);

    expect(compareProtos([copy], upstream)).toEqual([
      'runtime.v1.ImageSpec.user_specified_image: ebb declares = 17 optional string, published is = 18 optional string',
      'runtime.v1.Image.repo_tags: ebb declares = 2 optional string, published is = 2 repeated string',
      'runtime.v1.Image.size: ebb declares = 4 optional int64, published is = 4 optional uint64',
    ]);
  });
});

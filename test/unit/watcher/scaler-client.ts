/** A gRPC client of the scaler's ExternalScaler service, for the scaler's tests (plaintext or TLS). */
import { credentials, loadPackageDefinition, type ChannelCredentials, type Client, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { join } from 'node:path';

export type Unary<Req, Res> = (req: Req, cb: (err: ServiceError | null, res: Res) => void) => void;
export interface ScalerClient extends Client {
  IsActive: Unary<object, { result: boolean }>;
  GetMetricSpec: Unary<object, { metricSpecs: { metricName: string; targetSize: number }[] }>;
  GetMetrics: Unary<object, { metricValues: { metricName: string; metricValue: number }[] }>;
  StreamIsActive(req: object): ClientReadableStream<{ result: boolean }>;
}

export function client(port: number, creds: ChannelCredentials = credentials.createInsecure()): ScalerClient {
  const def = loadSync(join(import.meta.dirname, '../../../src/watcher/externalscaler.proto'), { keepCase: true, longs: Number, defaults: true });
  const pkg = loadPackageDefinition(def) as unknown as {
    externalscaler: { ExternalScaler: new (addr: string, creds: ChannelCredentials) => ScalerClient };
  };
  return new pkg.externalscaler.ExternalScaler(`127.0.0.1:${port}`, creds);
}

export const call = <Res>(fn: Unary<object, Res>, c: ScalerClient, req: object): Promise<Res> =>
  new Promise((resolve, reject) => fn.call(c, req, (err, res) => (err ? reject(err) : resolve(res))));

/**
 * The KEDA scaler's own settings: mutual TLS (its certificate and key, and the CA that signed KEDA's client
 * certificate) and the cap on open streams. TLS is all three files or none.
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from '../common/config-error.ts';
import { table, type Values } from '../common/settings.ts';

const PEM_FILE = { type: 'string', pattern: /^\//, format: 'be an absolute path' } as const;

export const SCALER_SETTINGS = table(
  {
    scalerTlsCertFile: {
      name: 'EBB_SCALER_TLS_CERT_FILE',
      ...PEM_FILE,
      doc: "PEM file of the scaler's certificate (chain): with the two below, the scaler speaks mutual TLS",
    },
    scalerTlsKeyFile: { name: 'EBB_SCALER_TLS_KEY_FILE', ...PEM_FILE, doc: "PEM file of the scaler certificate's private key" },
    scalerClientCaFile: {
      name: 'EBB_SCALER_CLIENT_CA_FILE',
      ...PEM_FILE,
      doc: "PEM file of the CA that signed KEDA's client certificate (a TriggerAuthentication's `tlsClientCert`); clients without one are refused",
    },
    scalerMaxStreams: {
      name: 'EBB_SCALER_MAX_STREAMS',
      type: 'int',
      min: 1,
      max: 10_000,
      default: 64,
      doc: 'open StreamIsActive streams at most (KEDA opens one per ScaledObject); more are refused with RESOURCE_EXHAUSTED',
    },
  },
  [
    {
      uses: ['scalerTlsCertFile', 'scalerTlsKeyFile', 'scalerClientCaFile'],
      problems: (v) => {
        const set = [v.scalerTlsCertFile, v.scalerTlsKeyFile, v.scalerClientCaFile].filter((x) => x !== undefined).length;
        return set === 0 || set === 3
          ? []
          : ['EBB_SCALER_TLS_CERT_FILE, EBB_SCALER_TLS_KEY_FILE and EBB_SCALER_CLIENT_CA_FILE must be set together (mutual TLS)'];
      },
    },
  ],
);

/** The PEM files of mutual TLS, as paths (read when the scaler starts, so a rotated Secret is read on restart). */
export interface ScalerTlsFiles {
  certFile: string;
  keyFile: string;
  clientCaFile: string;
}

export interface ScalerTlsPem {
  cert: Buffer;
  key: Buffer;
  clientCa: Buffer;
}

export function scalerTlsOf(v: Values<typeof SCALER_SETTINGS.entries>): ScalerTlsFiles | undefined {
  const { scalerTlsCertFile: certFile, scalerTlsKeyFile: keyFile, scalerClientCaFile: clientCaFile } = v;
  return certFile && keyFile && clientCaFile ? { certFile, keyFile, clientCaFile } : undefined;
}

/** Reads the three files; a missing or unreadable one is an `invalid configuration` naming its setting. */
export function readScalerTls(files: ScalerTlsFiles): ScalerTlsPem {
  const read = (setting: string, path: string): Buffer => {
    try {
      return readFileSync(path);
    } catch (err) {
      throw new ConfigError([`${setting}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`]);
    }
  };
  return {
    cert: read('EBB_SCALER_TLS_CERT_FILE', files.certFile),
    key: read('EBB_SCALER_TLS_KEY_FILE', files.keyFile),
    clientCa: read('EBB_SCALER_CLIENT_CA_FILE', files.clientCaFile),
  };
}

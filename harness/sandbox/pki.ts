import { execFile } from 'node:child_process';
import { mkdir, writeFile, access } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Paths of the sandbox's certificates and keys, all made with openssl in `<dir>/pki`. */
export interface Pki {
  dir: string;
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  saKey: string;
  saPub: string;
  /** Client certificates by identity (admin, controller-manager, scheduler). */
  clients: Record<ClientName, { cert: string; key: string }>;
  /** The apiserver's client certificate for kubelets (logs, exec): user KUBELET_CLIENT_USER. */
  kubeletClient: { cert: string; key: string };
}

/** The identity the apiserver presents to kubelets; real nodes bind it to `system:kubelet-api-admin`. */
export const KUBELET_CLIENT_USER = 'kube-apiserver-kubelet-client';

export type ClientName = 'admin' | 'controller-manager' | 'scheduler';

const SUBJECTS: Record<ClientName, string> = {
  admin: '/O=system:masters/CN=admin',
  'controller-manager': '/CN=system:kube-controller-manager',
  scheduler: '/CN=system:kube-scheduler',
};

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

async function openssl(args: string[]): Promise<void> {
  await run('openssl', args);
}

export async function signedCert(
  pki: { dir: string; caCert: string; caKey: string },
  name: string,
  subject: string,
  ext: string,
): Promise<{ cert: string; key: string }> {
  const key = join(pki.dir, `${name}.key`);
  const csr = join(pki.dir, `${name}.csr`);
  const cert = join(pki.dir, `${name}.crt`);
  const extFile = join(pki.dir, `${name}.ext`);
  if (await exists(cert)) return { cert, key };
  await writeFile(extFile, ext);
  await openssl(['req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', subject]);
  await openssl(['x509', '-req', '-in', csr, '-CA', pki.caCert, '-CAkey', pki.caKey, '-CAcreateserial', '-days', '365', '-out', cert, '-extfile', extFile]);
  return { cert, key };
}

/** Creates (or reuses, when present) a CA, the apiserver's serving cert, client certs and the service-account key pair. */
export async function ensurePki(root: string): Promise<Pki> {
  const dir = join(root, 'pki');
  await mkdir(dir, { recursive: true });
  const caCert = join(dir, 'ca.crt');
  const caKey = join(dir, 'ca.key');
  if (!(await exists(caCert))) {
    await openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', caKey, '-out', caCert, '-days', '365', '-subj', '/CN=ebb-sandbox-ca']);
  }
  const ca = { dir, caCert, caKey };
  const sans = 'DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:127.0.0.1,IP:10.0.0.1';
  const server = await signedCert(ca, 'apiserver', '/CN=kube-apiserver', `subjectAltName=${sans}\nextendedKeyUsage=serverAuth\n`);
  const clients = {} as Pki['clients'];
  for (const [name, subject] of Object.entries(SUBJECTS) as [ClientName, string][]) {
    clients[name] = await signedCert(ca, name, subject, 'extendedKeyUsage=clientAuth\n');
  }
  const kubeletClient = await signedCert(ca, 'apiserver-kubelet-client', `/CN=${KUBELET_CLIENT_USER}`, 'extendedKeyUsage=clientAuth\n');
  const saKey = join(dir, 'sa.key');
  const saPub = join(dir, 'sa.pub');
  if (!(await exists(saPub))) {
    await openssl(['genrsa', '-out', saKey, '2048']);
    await openssl(['rsa', '-in', saKey, '-pubout', '-out', saPub]);
  }
  return { dir, caCert, caKey, serverCert: server.cert, serverKey: server.key, saKey, saPub, clients, kubeletClient };
}

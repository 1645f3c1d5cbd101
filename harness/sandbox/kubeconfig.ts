import { readFile, writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';

/** Writes a kubeconfig with the certificates embedded, so the file works from any directory. */
export async function writeKubeconfig(path: string, server: string, caCert: string, client: { cert: string; key: string }, user: string): Promise<void> {
  const b64 = async (p: string): Promise<string> => (await readFile(p)).toString('base64');
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'ebb-sandbox', cluster: { server, 'certificate-authority-data': await b64(caCert) } }],
    users: [{ name: user, user: { 'client-certificate-data': await b64(client.cert), 'client-key-data': await b64(client.key) } }],
    contexts: [{ name: 'ebb-sandbox', context: { cluster: 'ebb-sandbox', user } }],
    'current-context': 'ebb-sandbox',
  };
  await writeFile(path, stringify(doc), { mode: 0o600 });
}

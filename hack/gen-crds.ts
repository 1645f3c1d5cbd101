/**
 * Regenerates the API's generated files. Run with `make crds` (or `npm run gen:crds`):
 * 1. controller-gen (built on first use by hack/controller-gen.sh) renders the Go types in hack/crdgen, and the
 *    pod template and claim schemas are written to src/api/pod-template.schema.json;
 * 2. deploy/crds is written from the schemas in src/api.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { CRD_DIR, renderCrdFiles } from '../src/api/crd-files.ts';
import {
  DESCRIPTION_POLICY,
  extractUpstreamSchemas,
  GENERATED_NOTICE,
  goModVersion,
  renderUpstreamSchemas,
  trimDescriptions,
  UPSTREAM_SCHEMA_FILE,
} from '../src/api/upstream-schema.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function writeUpstreamSchemas(): void {
  const goMod = readFileSync(join(root, 'hack/crdgen/go.mod'), 'utf8');
  const api = goModVersion(goMod, 'k8s.io/api');
  const tools = goModVersion(goMod, 'sigs.k8s.io/controller-tools');
  if (!api || !tools) throw new Error('hack/crdgen/go.mod must require k8s.io/api and sigs.k8s.io/controller-tools');
  const args = ['crd:generateEmbeddedObjectMeta=true', 'paths=./template/...', 'output:crd:stdout'];
  const yaml = execFileSync(join(root, 'hack/controller-gen.sh'), args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 });
  const { podTemplateSpec, persistentVolumeClaim } = extractUpstreamSchemas(parse(yaml));
  const file = join('src/api', UPSTREAM_SCHEMA_FILE);
  const text = renderUpstreamSchemas({
    generated: GENERATED_NOTICE,
    source: { 'k8s.io/api': api, 'sigs.k8s.io/controller-tools': tools },
    descriptions: DESCRIPTION_POLICY,
    podTemplateSpec: trimDescriptions(podTemplateSpec, DESCRIPTION_POLICY),
    persistentVolumeClaim: trimDescriptions(persistentVolumeClaim, DESCRIPTION_POLICY),
  });
  writeFileSync(join(root, file), text);
  console.log(`wrote ${file} (k8s.io/api ${api}, controller-gen ${tools})`);
}

writeUpstreamSchemas();
const dir = join(root, CRD_DIR);
mkdirSync(dir, { recursive: true });
for (const [file, content] of renderCrdFiles()) {
  writeFileSync(join(dir, file), content);
  console.log(`wrote ${join(CRD_DIR, file)}`);
}

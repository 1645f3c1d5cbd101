/** The smallest App the CRD accepts, with no pods: the base that the schema and quota tests patch onto. */
import { API_VERSION, APP_KIND } from '../../src/api/group.ts';

export function bareApp(name: string, image = 'registry.example.com/team/web:v1'): Record<string, unknown> {
  return {
    apiVersion: API_VERSION,
    kind: APP_KIND,
    metadata: { name },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image }] } },
    },
  };
}

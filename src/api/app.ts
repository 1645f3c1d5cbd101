/** The App kind: an enhanced StatefulSet (namespaced; subresources status and scale). */
import { Type, type Static } from '@sinclair/typebox';
import { AppSpecSchema } from './app-spec.ts';
import { AppStatusSchema } from './app-status.ts';
import { ObjectMetaSchema } from './meta.ts';

export const AppSchema = Type.Object({
  apiVersion: Type.String(),
  kind: Type.String(),
  metadata: ObjectMetaSchema,
  spec: AppSpecSchema,
  status: Type.Optional(AppStatusSchema),
});
export type App = Static<typeof AppSchema>;

/**
 * The defaults the apiserver applies from the CRD schema, applied in process: for fakes and unit tests that
 * build objects without an apiserver, and for code that wants a fully defaulted spec. Same schema, same result.
 */
import { Value } from '@sinclair/typebox/value';
import { AppSpecSchema, type AppSpec } from './app-spec.ts';
import { ImageListSpecSchema, type ImageListSpec } from './image-list.ts';

/** A defaulted copy of an App spec, as the apiserver would store it. The input is not changed. */
export function withAppSpecDefaults(spec: AppSpec): AppSpec {
  return Value.Default(AppSpecSchema, structuredClone(spec)) as AppSpec;
}

/** A defaulted copy of an ImageList spec, as the apiserver would store it. The input is not changed. */
export function withImageListSpecDefaults(spec: ImageListSpec): ImageListSpec {
  return Value.Default(ImageListSpecSchema, structuredClone(spec)) as ImageListSpec;
}

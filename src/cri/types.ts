/**
 * Wire shapes of the CRI image service messages declared in image-service.proto, as @grpc/proto-loader
 * produces and accepts them with the options in load.ts: camelCase field names, uint64/int64 decoded as
 * decimal strings, absent sub-messages decoded as null, scalars and repeated fields defaulted.
 * On the sending side every field is optional, as in proto3.
 */

/** A 64-bit integer on the wire: decoded as a decimal string, accepted as a number or string when sent. */
export type WireInt64 = string | number;

export interface ImageSpec {
  image?: string;
  annotations?: Record<string, string>;
  userSpecifiedImage?: string;
  runtimeHandler?: string;
}

/** Registry credential: every field except username and serverAddress is a secret; never log it. */
export interface AuthConfig {
  username?: string;
  password?: string;
  auth?: string;
  serverAddress?: string;
  identityToken?: string;
  registryToken?: string;
}

export interface Int64Value {
  value?: WireInt64;
}

export interface Image {
  id?: string;
  repoTags?: string[];
  repoDigests?: string[];
  size?: WireInt64;
  uid?: Int64Value | null;
  username?: string;
  spec?: ImageSpec | null;
  pinned?: boolean;
}

export interface ImageFilter {
  image?: ImageSpec | null;
}

export interface ListImagesRequest {
  filter?: ImageFilter | null;
}

export interface ListImagesResponse {
  images?: Image[];
}

export interface ImageStatusRequest {
  image?: ImageSpec | null;
  verbose?: boolean;
}

export interface ImageStatusResponse {
  /** Absent (null/undefined) when the runtime does not have the image. */
  image?: Image | null;
  info?: Record<string, string>;
}

export interface PullImageRequest {
  image?: ImageSpec | null;
  auth?: AuthConfig | null;
  /** Declared as an empty message; ebb never sends one. */
  sandboxConfig?: Record<string, never> | null;
}

export interface PullImageResponse {
  imageRef?: string;
}

export interface RemoveImageRequest {
  image?: ImageSpec | null;
}

export type RemoveImageResponse = Record<string, never>;

/** Request and response message of each ImageService method ebb uses. */
export interface ImageServiceMethods {
  ListImages: [ListImagesRequest, ListImagesResponse];
  ImageStatus: [ImageStatusRequest, ImageStatusResponse];
  PullImage: [PullImageRequest, PullImageResponse];
  RemoveImage: [RemoveImageRequest, RemoveImageResponse];
}

export type ImageServiceMethod = keyof ImageServiceMethods;

/** An image as ebb works with it: the CRI `Image` message with its size as a number of bytes. */
export interface CriImage {
  /** Image ID, `sha256:<config digest>`. */
  id: string;
  repoTags: string[];
  /** `repo@sha256:<manifest digest>` references. */
  repoDigests: string[];
  size: number;
  pinned: boolean;
}

/**
 * Wire shapes of the CRI messages declared in image-service.proto and runtime-service.proto, as @grpc/proto-loader
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
  /** base64 of `username:password`, as in a docker config.json. */
  auth?: string;
  /**
   * The registry the credential is for. containerd 1.6 parses it as a URL and drops the credential when its
   * host is not the image's registry; CriClient sends a bare `host[:port]` as `https://host[:port]` (as is,
   * containerd fails the pull with "first path segment in URL cannot contain colon").
   */
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

export type ImageFsInfoRequest = Record<string, never>;

export interface UInt64Value {
  value?: WireInt64;
}

export interface FilesystemUsage {
  /** Nanoseconds since the epoch. */
  timestamp?: WireInt64;
  fsId?: { mountpoint?: string } | null;
  usedBytes?: UInt64Value | null;
  inodesUsed?: UInt64Value | null;
}

export interface ImageFsInfoResponse {
  imageFilesystems?: FilesystemUsage[];
  containerFilesystems?: FilesystemUsage[];
}

export interface VersionRequest {
  version?: string;
}

export interface VersionResponse {
  version?: string;
  runtimeName?: string;
  runtimeVersion?: string;
  runtimeApiVersion?: string;
}

/**
 * Request and response message of the ImageService methods a simulated node serves (the handlers of
 * harness/sandbox/node/cri-server.ts are typed from it, so it lists exactly what that server implements).
 */
export interface ImageServiceMethods {
  ListImages: [ListImagesRequest, ListImagesResponse];
  ImageStatus: [ImageStatusRequest, ImageStatusResponse];
  PullImage: [PullImageRequest, PullImageResponse];
  RemoveImage: [RemoveImageRequest, RemoveImageResponse];
  ImageFsInfo: [ImageFsInfoRequest, ImageFsInfoResponse];
}

export type ImageServiceMethod = keyof ImageServiceMethods;

/** Request and response message of every CRI method ebb's client calls, with the service that declares it. */
export interface CriMethods {
  ListImages: ['ImageService', ListImagesRequest, ListImagesResponse];
  ImageStatus: ['ImageService', ImageStatusRequest, ImageStatusResponse];
  PullImage: ['ImageService', PullImageRequest, PullImageResponse];
  RemoveImage: ['ImageService', RemoveImageRequest, RemoveImageResponse];
  ImageFsInfo: ['ImageService', ImageFsInfoRequest, ImageFsInfoResponse];
  Version: ['RuntimeService', VersionRequest, VersionResponse];
}

export type CriMethod = keyof CriMethods;

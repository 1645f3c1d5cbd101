/**
 * Why a tenant-directed request (a check's, a notification's) was refused or failed. The message is ebb's own
 * wording: it never carries the answer's body, a client library's message or an address a name resolved to.
 */
export type EgressErrorCode =
  'BadUrl' | 'HostNotAllowed' | 'AddressRefused' | 'HeaderRefused' | 'TooLarge' | 'Redirect' | 'Timeout' | 'Aborted' | 'ConnectFailed' | 'RequestFailed';

export class EgressError extends Error {
  readonly code: EgressErrorCode;
  constructor(code: EgressErrorCode, message: string) {
    super(message);
    this.name = 'EgressError';
    this.code = code;
  }
}

export const isEgressError = (err: unknown, ...codes: EgressErrorCode[]): err is EgressError =>
  err instanceof EgressError && (codes.length === 0 || codes.includes(err.code));

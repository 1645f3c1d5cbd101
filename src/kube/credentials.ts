/** What authenticates one request: headers, plus a client certificate when an exec plugin hands one out. */
export interface Credentials {
  headers: Record<string, string>;
  cert?: Buffer | string;
  key?: Buffer | string;
}

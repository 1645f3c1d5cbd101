/** Arguments a command cannot accept: printed with the command's usage, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  /** A stable code for callers that branch on the error kind. */
  readonly code = 'BadArguments';
  /** The usage text of the command, printed after the message. */
  readonly usage: string;
  constructor(message: string, usage: string) {
    super(message);
    this.usage = usage;
  }
}

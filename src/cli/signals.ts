/** Resolves when SIGINT or SIGTERM arrives. */
export function untilSignal(): Promise<string> {
  return new Promise((res) => {
    const on = (sig: string): void => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      res(sig);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}

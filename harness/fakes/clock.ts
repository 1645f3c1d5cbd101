/** The one clock of the in-memory tests: time moves only when a test (or the fake kubelet's tick) advances it. */
export class Clock {
  private t: number;

  constructor(start: string | number = '2025-06-01T12:00:00Z') {
    this.t = typeof start === 'number' ? start : Date.parse(start);
  }

  /** The current time; bound, so it can be passed on as a `() => Date`. */
  readonly now = (): Date => new Date(this.t);

  /** The current time in epoch milliseconds. */
  get ms(): number {
    return this.t;
  }

  advance(ms: number): void {
    this.t += ms;
  }
}

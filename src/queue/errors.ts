/**
 * Invalid configuration: thrown once at start-up by the parsers, with every problem listed. Messages name
 * the setting and never echo a secret (Redis URLs are redacted before they get here).
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(problems.length === 1 ? `invalid configuration: ${problems[0]}` : `invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.problems = problems;
  }
}

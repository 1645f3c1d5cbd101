/**
 * Invalid configuration: thrown once at start-up by the settings parser, with every problem listed. Messages
 * name the setting and never echo a secret (passwords and tokens are left out, URLs are shown redacted).
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  /** A stable code for callers that branch on the error kind. */
  readonly code = 'InvalidConfiguration';
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(problems.length === 1 ? `invalid configuration: ${problems[0]}` : `invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.problems = Object.freeze([...problems]);
  }
}

/** The problems `parse` reports as a ConfigError; none when it returns. Any other error is thrown on. */
export function configProblems(parse: () => unknown): readonly string[] {
  try {
    parse();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

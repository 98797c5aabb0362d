/** A configuration value that cannot start the service; the message names the variable. */
export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

/**
 * Values that work only together: false when none is set (the feature is off), true when all are;
 * some but not all stops the start, naming the missing ones.
 */
export function allOrNone(values: Record<string, string | undefined>, feature: string): boolean {
  const names = Object.keys(values);
  const missing = names.filter((name) => !values[name]);
  if (missing.length === names.length) return false;
  if (missing.length > 0)
    throw new ConfigError(missing.join(' and '), `must be set too: ${feature} needs ${names.join(', ')}`);
  return true;
}

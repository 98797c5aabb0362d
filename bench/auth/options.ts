/** What the parts read of the command line (bench/auth.ts parses it). */
export interface AuthBenchOptions {
  /** Seconds of each timed run. */
  seconds: number;
  /** autocannon connections (part 1) and closed-loop clients (part 2). */
  connections: number;
  rounds: number;
  warmupSeconds: number;
  /** Sessions signed in and logged out, then external tokens logged out, before part 1. */
  revokedSessions: number;
  revokedExternal: number;
}

/**
 * Shared pieces of the benchmarks: a database to run against (a data folder for the embedded
 * PostgreSQL, or a fresh database on the external server), the built server as a child process,
 * reference servers replaying a recorded response (bench/reference-server.ts), load runs (wrk or
 * autocannon) and CPU time from /proc. Everything talks to 127.0.0.1 only.
 */

export * from './lib/api.js';
export { BENCH_SERVER_ENV, benchToken } from './lib/credentials.js';
export * from './lib/database.js';
export * from './lib/figures.js';
export * from './lib/load.js';
export * from './lib/server.js';

import type pg from 'pg';

/**
 * Bounds on every connection: a statement running longer than this is cancelled by the server, a
 * transaction left idle (holding its locks) is ended, and a query whose answer never arrives (a
 * network cut) fails on our side a little later.
 */
export const DATABASE_TIMEOUTS = {
  connectMs: 5000,
  statementMs: 15_000,
  idleInTransactionMs: 10_000,
  queryMs: 20_000,
} as const;

/** The database cannot be used; the message says what is wrong and what to do (printed without a stack). */
export class DatabaseStartError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DatabaseStartError';
  }
}

/** `host:port/database`, never the password. */
export function describeServer(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname || 'localhost'}:${parsed.port || 5432}${parsed.pathname}`;
}

/** A connection failure at start, as a sentence an operator can act on. */
export function connectionFailure(error: unknown, url: string): DatabaseStartError {
  const parsed = new URL(url);
  const host = `${parsed.hostname || 'localhost'}:${parsed.port || 5432}`;
  const database = decodeURIComponent(parsed.pathname.slice(1)) || decodeURIComponent(parsed.username) || 'postgres';
  const user = decodeURIComponent(parsed.username) || 'the current user';
  const { code, message } = error as { code?: string; message?: string };
  const because = (() => {
    switch (code) {
      case '3D000':
        return `the database "${database}" does not exist on ${host}. Create it (createdb -h ${parsed.hostname} -p ${parsed.port || 5432} ${parsed.username ? `-U ${user} ` : ''}${database}, or in psql: create database "${database}";) or fix DATABASE_URL.`;
      case '28P01':
      case '28000':
        return `PostgreSQL at ${host} refused user "${user}": ${message}. Check the user and password in DATABASE_URL.`;
      case 'ECONNREFUSED':
        return `nothing accepts connections at ${host}: is PostgreSQL running there, and is DATABASE_URL right?`;
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
        return `the host "${parsed.hostname}" cannot be resolved. Check DATABASE_URL.`;
      default:
        return /timeout/i.test(message ?? '')
          ? `PostgreSQL at ${host} did not answer within ${DATABASE_TIMEOUTS.connectMs / 1000} s.`
          : `${message ?? String(error)} (PostgreSQL at ${host}).`;
    }
  })();
  return new DatabaseStartError(`Cannot use the database ${describeServer(url)}: ${because}`, { cause: error });
}

/** The settings of every pooled connection. */
export function connectionSettings(url: string): pg.ClientConfig {
  return {
    connectionString: url,
    connectionTimeoutMillis: DATABASE_TIMEOUTS.connectMs,
    statement_timeout: DATABASE_TIMEOUTS.statementMs,
    idle_in_transaction_session_timeout: DATABASE_TIMEOUTS.idleInTransactionMs,
    query_timeout: DATABASE_TIMEOUTS.queryMs,
    application_name: 'pack-service',
  };
}

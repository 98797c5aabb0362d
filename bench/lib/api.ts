import { Agent, request as httpRequest } from 'node:http';

// API calls as a client makes them: one at a time with retries, or lean ones for the load loops.

export interface ApiAnswer {
  status: number;
  /** The Retry-After header of a 429 or 503, in seconds. */
  retryAfterSeconds?: number;
  json: { data?: Record<string, unknown> & { id?: string } };
}

/**
 * One API call as a client makes it: a bearer token, JSON in and out, answered within 10 s. A 503
 * `overloaded` is retried after its Retry-After and a random part of a second (up to `tries`, 5 by
 * default), as the API asks of its clients, unless `retryOverloaded` is false (a load test
 * counting the refusals itself).
 */
export async function apiCall(
  url: string,
  method: string,
  token: string,
  body?: unknown,
  options: { retryOverloaded?: boolean; tries?: number; headers?: Record<string, string> } = {},
): Promise<ApiAnswer> {
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(url, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...options.headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const answer: ApiAnswer = {
      status: res.status,
      retryAfterSeconds: Number(res.headers.get('retry-after')) || undefined,
      json: (await res.json()) as ApiAnswer['json'],
    };
    const overloaded =
      answer.status === 503 && (answer.json as { error?: { code?: string } }).error?.code === 'overloaded';
    if (!overloaded || options.retryOverloaded === false || attempt >= (options.tries ?? 5)) return answer;
    // Up to a second more at random: clients refused together must not all come back together.
    await new Promise((resolve) => setTimeout(resolve, ((answer.retryAfterSeconds ?? 1) + Math.random()) * 1000));
  }
}

/** The answer's data, or an error naming what failed when the status is not `status`. */
export async function expectOk(
  what: string,
  answer: Promise<ApiAnswer>,
  status = 200,
): Promise<Record<string, unknown> & { id: string }> {
  const res = await answer;
  if (res.status !== status) throw new Error(`${what} answered ${res.status}: ${JSON.stringify(res.json)}`);
  return res.json.data as Record<string, unknown> & { id: string };
}

/** Keep-alive connections for the load loops, as many as the callers open at once. */
const keepAlive = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });

export interface LeanAnswer {
  status: number;
  /** The Retry-After header of a 429 or 503, in seconds. */
  retryAfterSeconds?: number;
  body: { data?: Record<string, unknown>; error?: { code?: string } };
}

/**
 * One API call over node:http with a keep-alive agent: what `apiCall` does, at a fraction of
 * fetch's CPU. The load generator shares the machine's two cores with the server and its
 * PostgreSQL, so its own cost per request is part of every figure it measures.
 */
export function leanCall(
  url: string,
  method: string,
  token: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<LeanAnswer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      {
        method,
        agent: keepAlive,
        timeout: 30_000,
        headers: {
          authorization: `Bearer ${token}`,
          ...(payload === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
          ...headers,
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          try {
            resolve({
              status: response.statusCode ?? 0,
              retryAfterSeconds: Number(response.headers['retry-after']) || undefined,
              body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as LeanAnswer['body'],
            });
          } catch (error) {
            reject(error);
          }
        });
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error(`${method} ${url} did not answer within 30 s`)));
    request.on('error', reject);
    request.end(payload);
  });
}

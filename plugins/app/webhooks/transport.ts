import { type ClientRequest, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import {
  classifyAddress,
  literalHostVerdict,
  type ResolvedAddress,
  type Resolver,
  resolveTarget,
  TargetRefusedError,
} from './ssrf.js';

/**
 * One delivery attempt of an outbound webhook: resolve and check the target, then POST to the
 * checked address and nothing else. Never throws: every end of an attempt is a SendResult.
 *
 * - The host is resolved before each attempt and every address checked (ssrf.ts); the connection
 *   is pinned to the checked address through the socket's `lookup`, so a DNS answer that changes
 *   between the check and the connect (DNS rebinding) reaches nothing new. The request still
 *   names the real host: Host header, TLS SNI and certificate checks are on the URL's host name.
 * - No connection is reused (`agent: false`): a pooled socket could outlive the check.
 * - Redirects are not followed: a 3xx is a failure with its status.
 * - One deadline covers resolution, connect, the request and the response's headers; the body is
 *   read until RESPONSE_BODY_LIMIT bytes, its end or the deadline, and the rest discarded by closing.
 * - https only, unless private targets are allowed (development and tests), where http is too.
 */

export interface SendResult {
  /** 'delivered' = 2xx; 'gone' = 410; 'refused' = the guard refused the target (no connection); 'failed' = anything else. */
  outcome: 'delivered' | 'failed' | 'gone' | 'refused';
  status: number | null;
  error: string | null;
  durationMs: number;
  /** The address connected to, or the address refused; null when the name did not resolve. */
  address: string | null;
  /**
   * The start of the response body (at most RESPONSE_BODY_LIMIT bytes, decoded as UTF-8, without
   * NUL characters), for the endpoint's owner; null when no response came.
   */
  responseBody: string | null;
}

export interface SendOptions {
  allowPrivate: boolean;
  /** The whole attempt's deadline: resolution, connect, request and the response's headers. */
  timeoutMs?: number;
  resolve?: Resolver;
  /** Aborts the attempt (shutdown): it ends 'failed' with the error 'aborted'. */
  signal?: AbortSignal;
}

export const DEFAULT_TIMEOUT_MS = 15_000;
export const RESPONSE_BODY_LIMIT = 1024;

/**
 * Plain http carries no protection in transit, so it is for local receivers only: where private
 * targets are allowed, and to a loopback address. Registration applies it to the host as written
 * (a literal, or `localhost`; it never resolves a name), each attempt to the address it resolved.
 */
export const PLAIN_HTTP_RULE = 'the URL must be https (plain http only to a loopback host)';
export const isLoopbackAddress = (address: string): boolean => {
  const verdict = classifyAddress(address.replace(/^\[(.*)\]$/, '$1'));
  return !verdict.allowed && verdict.reason === 'loopback';
};

/**
 * Why a URL cannot be a webhook target, or null when it can: for registration (a 400) and before
 * each attempt. A literal address is judged here; a host name only when a delivery resolves it.
 */
export function targetUrlProblem(url: string, options: { allowPrivate: boolean }): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'not a URL';
  }
  if (parsed.protocol !== 'https:' && !(options.allowPrivate && parsed.protocol === 'http:'))
    return options.allowPrivate ? 'the URL must be http or https' : 'the URL must be https';
  // Credentials in a URL would be shown wherever the endpoint is listed; a receiver that needs
  // them can put a token in the path or query instead.
  if (parsed.username || parsed.password) return 'the URL must not carry a user name or password';
  const verdict = literalHostVerdict(url);
  if (verdict && !verdict.allowed && !options.allowPrivate) return `the host is a refused address (${verdict.reason})`;
  if (parsed.protocol === 'http:' && verdict && !isLoopbackAddress(parsed.hostname)) return PLAIN_HTTP_RULE;
  return null;
}

/**
 * A socket `lookup` that answers the checked address whatever name it is asked for, in both shapes
 * Node asks for (one address, or all of them for the family auto-selection of `net.connect`).
 */
export function pinnedLookup(pinned: ResolvedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    // Asynchronous like the real lookup: the socket's listeners are in place when it answers.
    process.nextTick(() => {
      if (options.all) callback(null, [{ address: pinned.address, family: pinned.family }]);
      else callback(null, pinned.address, pinned.family);
    });
  };
}

/** The request of one attempt: to the URL's host name, connected to the pinned address only. */
export function requestOptions(
  url: URL,
  pinned: ResolvedAddress,
  headers: Record<string, string>,
  bodyBytes: number,
): RequestOptions {
  return {
    method: 'POST',
    protocol: url.protocol,
    hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port || (url.protocol === 'https:' ? 443 : 80),
    path: `${url.pathname}${url.search}`,
    headers: { ...headers, 'content-length': String(bodyBytes) },
    lookup: pinnedLookup(pinned),
    agent: false,
  };
}

class AttemptAborted extends Error {}
const TIMEOUT = 'timeout';
const ABORTED = 'aborted';

/** Rejects when the signal aborts, without waiting for a promise that cannot be cancelled (a DNS lookup). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new AttemptAborted());
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** POSTs the body; answers the status and the first RESPONSE_BODY_LIMIT bytes of the response. */
function exchange(
  options: RequestOptions,
  body: Buffer,
  signal: AbortSignal,
): Promise<{ status: number; responseBody: string }> {
  return new Promise((resolve, reject) => {
    const send = options.protocol === 'https:' ? httpsRequest : httpRequest;
    const request: ClientRequest = send({ ...options, signal });
    // Set once the response's status is in: from then on every end (its end, the limit, the
    // deadline, a reset) answers that status with the body read so far.
    let finish: (() => void) | undefined;
    request.on('error', (error) => (finish ? finish() : reject(error)));
    request.on('response', (response: IncomingMessage) => {
      const status = response.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let received = 0;
      finish = () => {
        response.removeAllListeners('data');
        // The status is what counts: the rest of the body (or a receiver still sending) is cut off.
        request.destroy();
        const text = Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString('utf8');
        // As text PostgreSQL can store: invalid UTF-8 is already U+FFFD; NUL characters go.
        resolve({ status, responseBody: text.replaceAll('\0', '') });
      };
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        received += chunk.length;
        if (received >= RESPONSE_BODY_LIMIT) finish?.();
      });
      response.on('error', () => finish?.());
      response.once('end', () => finish?.());
      response.once('close', () => finish?.());
    });
    request.end(body);
  });
}

function describe(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) return signal.reason === TIMEOUT ? TIMEOUT : ABORTED;
  const { code, message } = error as { code?: string; message?: string };
  const text = message ?? String(error);
  return (code && !text.includes(code) ? `${code}: ${text}` : text).slice(0, 300);
}

function outcomeOf(status: number): Pick<SendResult, 'outcome' | 'error'> {
  if (status >= 200 && status < 300) return { outcome: 'delivered', error: null };
  if (status === 410) return { outcome: 'gone', error: 'HTTP 410' };
  if (status >= 300 && status < 400) return { outcome: 'failed', error: `redirect not followed (HTTP ${status})` };
  return { outcome: 'failed', error: `HTTP ${status}` };
}

/** One delivery attempt (see the top of this file). */
export async function sendWebhook(
  target: { url: string; headers: Record<string, string>; body: string },
  options: SendOptions,
): Promise<SendResult> {
  const started = performance.now();
  const result = (fields: Partial<SendResult> & Pick<SendResult, 'outcome'>): SendResult => ({
    status: null,
    error: null,
    address: null,
    responseBody: null,
    ...fields,
    durationMs: Math.round(performance.now() - started),
  });

  const problem = targetUrlProblem(target.url, options);
  if (problem) return result({ outcome: 'refused', error: problem });
  const url = new URL(target.url);

  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(TIMEOUT), options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const onAbort = () => deadline.abort(ABORTED);
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  let pinned: ResolvedAddress | undefined;
  try {
    pinned = await untilAborted(resolveTarget(url.hostname, options), deadline.signal);
    if (url.protocol === 'http:' && !isLoopbackAddress(pinned.address))
      return result({ outcome: 'refused', error: PLAIN_HTTP_RULE, address: pinned.address });
    const body = Buffer.from(target.body, 'utf8');
    const { status, responseBody } = await exchange(
      requestOptions(url, pinned, target.headers, body.length),
      body,
      deadline.signal,
    );
    return result({ ...outcomeOf(status), status, address: pinned.address, responseBody });
  } catch (error) {
    if (error instanceof TargetRefusedError)
      return result({
        outcome: 'refused',
        error: `the host resolves to a refused address (${error.reason})`,
        address: error.address ?? null,
      });
    return result({ outcome: 'failed', error: describe(error, deadline.signal), address: pinned?.address ?? null });
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
}

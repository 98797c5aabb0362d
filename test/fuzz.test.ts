import fc from 'fast-check';
import t from 'tap';
import { bearer, buildTestApp, tokenFor } from './support/app.js';
import { ADMIN, createCollectible, packInStatus } from './support/catalog.js';
import {
  type OpenApiDocument,
  type Operation,
  operationsOf,
  ResponseChecker,
  SchemaArbitraries,
} from './support/fuzz.js';
import { staffedTeam } from './support/teams.js';
import { startGooglePlayStandIn } from './support/google-play.js';
import { startAppleStandIn } from './support/apple.js';
import { startStripeStandIn } from './support/stripe.js';

/**
 * A fuzz test of our own, from the OpenAPI document: every operation, valid and broken input,
 * several identities. No answer may be a 5xx, and every answer must be a status the operation
 * declares, with a body that matches the schema declared for it.
 *
 * `npm test` runs a bounded, seeded sample; `npm run fuzz` a long one:
 *   FUZZ_RUNS=20000 FUZZ_SEED=7 npm run fuzz
 */

const RUNS = Number(process.env.FUZZ_RUNS ?? 600);
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_122);

/** Percent-encodes anything, lone surrogates included (as the invalid UTF-8 a hostile client sends). */
function encode(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return [...value].map((char) => (/[\ud800-\udfff]/.test(char) ? '%ED%A0%80' : encodeURIComponent(char))).join('');
  }
}

interface FuzzRequest {
  operation: Operation;
  identity: string;
  path: string[];
  query: Record<string, string>;
  body?: { json: unknown } | { raw: string; contentType: string };
}

t.test(
  'fuzzing every operation of the OpenAPI document: no 5xx, and every answer as the document declares',
  async (t) => {
    // Checkout configured against the Stripe, App Store and Google stand-ins: the operations are fuzzed as they run in production.
    const stripe = await startStripeStandIn();
    t.teardown(() => stripe.close());
    const apple = await startAppleStandIn();
    t.teardown(() => apple.close());
    const google = await startGooglePlayStandIn();
    t.teardown(() => google.close());
    const app = await buildTestApp(t, { RATE_LIMIT_MAX: '100000000', ...stripe.env, ...apple.env, ...google.env });
    // Something to find: a staffed team, packs in every status, collectibles.
    const staff = await staffedTeam(app, 'fuzz');
    const packs = await Promise.all(
      (['draft', 'active', 'archived'] as const).map((status) =>
        packInStatus(app, status, { pack: { name: `Fuzz ${status}`, teamId: staff.team.id } }),
      ),
    );
    const platform = await createCollectible(app, { name: 'Platform card' });
    const knownIds = [
      staff.team.id,
      platform.id,
      'fuzz-owner',
      'fuzz-editor',
      'fuzz-viewer',
      ...packs.flatMap(({ pack, collectibles }) => [pack.id, ...collectibles.map((c) => c.id)]),
    ];
    const cursors = (
      await Promise.all(
        ['/api/packs?limit=1', '/api/teams?limit=1', '/api/admin/packs?limit=1'].map((url) =>
          app.inject({ url, headers: bearer(ADMIN) }),
        ),
      )
    )
      .map((res) => res.json().nextCursor as string | null)
      .filter((cursor): cursor is string => Boolean(cursor));

    const document = app.swagger() as unknown as OpenApiDocument;
    const operations = operationsOf(document);
    t.ok(operations.length >= 20, `${operations.length} operations`);
    const arbitraries = new SchemaArbitraries(document.components.schemas, fc.constantFrom(...knownIds, 'no-such-id'));
    const checker = new ResponseChecker(document);

    const identities: Record<string, string | undefined> = {
      anonymous: undefined,
      fan: `Bearer ${tokenFor('fuzz-fan')}`,
      viewer: staff.viewer && `Bearer ${staff.viewer}`,
      editor: `Bearer ${staff.editor}`,
      owner: `Bearer ${staff.owner}`,
      admin: `Bearer ${ADMIN}`,
      forged: `Bearer ${tokenFor('root', { role: 'admin' }, 'not-the-secret-but-long-enough-to-sign-with')}`,
      expired: `Bearer ${tokenFor('fuzz-fan', { exp: Math.floor(Date.now() / 1000) - 3600 })}`,
      malformed: 'Bearer not.a.jwt',
      basic: 'Basic dXNlcjpwYXNz',
    };

    const nonEmptyNasty = fc.oneof(
      fc.string({ minLength: 1, maxLength: 30 }),
      fc.constantFrom('\ufeff', 'a\ud800é\udc00b', '\u0000', '..', '%', 'x'.repeat(129), 'x'.repeat(300), '😀', ' '),
    );
    const requestFor = (operation: Operation): fc.Arbitrary<FuzzRequest> => {
      const pathParameters = operation.parameters.filter((parameter) => parameter.in === 'path');
      const queryParameters = operation.parameters.filter((parameter) => parameter.in === 'query');
      const query = fc.record(
        Object.fromEntries([
          ...queryParameters.map((parameter) => [
            parameter.name,
            fc.oneof(
              {
                weight: 4,
                arbitrary: (parameter.name === 'cursor' && cursors.length
                  ? fc.constantFrom(...cursors)
                  : arbitraries.valid(parameter.schema)
                ).map(String),
              },
              { weight: 1, arbitrary: fc.oneof(nonEmptyNasty, fc.constantFrom('Infinity', '1e400', '-1', '0', '')) },
            ),
          ]),
          ['unknownParameter', nonEmptyNasty],
        ]),
        { requiredKeys: [] },
      ) as fc.Arbitrary<Record<string, string>>;
      const body = operation.body
        ? fc.oneof(
            { weight: 5, arbitrary: arbitraries.valid(operation.body).map((json) => ({ json })) },
            { weight: 3, arbitrary: arbitraries.invalid(operation.body).map((json) => ({ json })) },
            {
              weight: 1,
              arbitrary: fc.record({
                raw: fc.constantFrom('{', '', 'null', '[]', '"x"', '{"a":1,}', '\u0000'),
                contentType: fc.constantFrom(
                  'application/json',
                  'text/plain',
                  'application/x-www-form-urlencoded',
                  'application/json; charset=latin1',
                ),
              }),
            },
          )
        : fc.constant(undefined);
      return fc.record({
        operation: fc.constant(operation),
        identity: fc.constantFrom(...Object.keys(identities)),
        // `.` and `..` cannot be sent as a path segment: every URL parser resolves them away, encoded or not.
        path: fc.tuple(
          ...pathParameters.map((parameter) =>
            fc
              .oneof(
                { weight: 4, arbitrary: arbitraries.valid(parameter.schema).map(String) },
                { weight: 1, arbitrary: nonEmptyNasty },
              )
              .filter((value) => value !== '.' && value !== '..'),
          ),
        ),
        query,
        body,
      }) as fc.Arbitrary<FuzzRequest>;
    };

    const statuses: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(fc.oneof(...operations.map(requestFor)), async (request) => {
        let index = 0;
        const path = request.operation.path.replace(/\{[^}]+\}/g, () => encode(request.path[index++] ?? 'x'));
        const search = Object.entries(request.query)
          .map(([key, value]) => `${encode(key)}=${encode(value)}`)
          .join('&');
        const authorization = identities[request.identity];
        const headers: Record<string, string> = authorization ? { authorization } : {};
        let payload: string | undefined;
        if (request.body && 'json' in request.body) {
          payload = JSON.stringify(request.body.json) ?? 'null';
          headers['content-type'] = 'application/json';
        } else if (request.body) {
          payload = request.body.raw;
          headers['content-type'] = request.body.contentType;
        }
        const res = await app.inject({
          method: request.operation.method as 'GET',
          url: `${path}${search ? `?${search}` : ''}`,
          headers,
          ...(payload !== undefined ? { payload } : {}),
        });
        const key = `${request.operation.method} ${request.operation.path} ${res.statusCode}`;
        statuses[key] = (statuses[key] ?? 0) + 1;
        const verdict = checker.check(
          request.operation,
          res.statusCode,
          res.headers['content-type'] as string | undefined,
          res.body,
        );
        if (!verdict.ok)
          throw new Error(`${request.operation.method} ${path}: ${verdict.problem}; body ${res.body.slice(0, 300)}`);
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    const answered = Object.keys(statuses).length;
    t.pass(`${RUNS} requests, seed ${SEED}: ${answered} distinct operation/status pairs, none a 5xx, all as declared`);
    const byStatus: Record<string, number> = {};
    for (const [key, count] of Object.entries(statuses)) {
      const status = key.split(' ').pop() as string;
      byStatus[status] = (byStatus[status] ?? 0) + count;
    }
    t.comment(`statuses: ${JSON.stringify(byStatus)}`);
    t.ok(
      Object.keys(byStatus).some((status) => status.startsWith('2')),
      'some requests succeed',
    );
    t.ok(
      Object.keys(byStatus).some((status) => status.startsWith('4')),
      'some are refused',
    );
  },
);

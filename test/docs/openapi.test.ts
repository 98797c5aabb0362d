import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { readFileSync, statSync } from 'node:fs';
import { promisify } from 'node:util';
import { validate } from '@readme/openapi-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import t from 'tap';
import { generateOpenApiDocument } from '../../scripts/openapi-document.js';
import { PROJECT_ROOT } from '../support/paths.js';

const run = promisify(execFile);
const committedPath = join(PROJECT_ROOT, 'docs', 'openapi.json');

type Json = Record<string, unknown>;
interface Document {
  servers: { url: string; description: string }[];
  tags: { name: string }[];
  paths: Record<
    string,
    Record<string, { tags?: string[]; summary?: string; operationId?: string; responses: Record<string, Json> }>
  >;
  components: {
    schemas: Record<string, Json>;
    responses: Record<string, Json>;
    headers: Record<string, Json>;
    securitySchemes: Json;
  };
}
const committed = () => JSON.parse(readFileSync(committedPath, 'utf8')) as Document;

t.test('docs/openapi.json is current (run `npm run openapi` after changing a route)', async (t) => {
  t.equal(readFileSync(committedPath, 'utf8'), await generateOpenApiDocument());
});

t.test('the document is valid OpenAPI 3.1, and small: shared schemas are named, not inlined', async (t) => {
  const document = committed();
  t.equal((document as unknown as { openapi: string }).openapi, '3.1.0');
  const result = await validate(JSON.parse(readFileSync(committedPath, 'utf8')));
  t.ok(result.valid, result.valid ? 'valid' : JSON.stringify(result.errors, null, 2));
  const size = statSync(committedPath).size;
  // ~4-6 KB per operation, pretty-printed, once every shared schema and error response is a $ref
  // (75 operations: 405 KB; 89: 488 KB). A schema inlined into every route would add tens of KB
  // at once, well past 6 KB per operation.
  // The outbound webhooks' entries (OpenAPI 3.1 `webhooks`) are operations too: a payload each.
  const { paths, webhooks = {} } = document as unknown as {
    paths: Record<string, object>;
    webhooks?: Record<string, object>;
  };
  const operations = [...Object.values(paths), ...Object.values(webhooks)].reduce<number>(
    (count, item) =>
      count + Object.keys(item).filter((key) => ['get', 'put', 'post', 'patch', 'delete'].includes(key)).length,
    0,
  );
  const bound = operations * 6 * 1024;
  t.ok(
    size < bound,
    `${Math.round(size / 1024)} KB (under ${Math.round(bound / 1024)} KB for ${operations} operations and webhooks)`,
  );
  for (const name of [
    'Error',
    'ErrorDetail',
    'PublicPack',
    'AdminPack',
    'AdminPackSummary',
    'PoolEntry',
    'PublicCollectible',
    'Collectible',
    'Team',
    'TeamAdmin',
    'CurrentUser',
    'AuditEntry',
    'PackStatus',
    'PackActionName',
    'Rarity',
    'TeamRole',
    'PackActionRequest',
    'CreatePackRequest',
  ]) {
    t.ok(document.components.schemas[name], `components.schemas.${name}`);
  }
  const text = readFileSync(committedPath, 'utf8');
  t.equal((text.match(/"code":\s*\{/g) ?? []).length, 1, 'the error envelope is defined once');
});

t.test("the Stripe webhook declares its request body, so a validating proxy forwards Stripe's events", async (t) => {
  const operation = committed().paths['/api/webhooks/stripe']?.post as unknown as {
    requestBody?: { required?: boolean; content: Record<string, { schema: Json }> };
  };
  t.ok(operation.requestBody?.required, 'a body is required');
  const schema = operation.requestBody?.content['application/json']?.schema as Json;
  t.ok(schema, 'as JSON');
  const validate = new Ajv2020({ strict: false }).compile(schema);
  const event = {
    id: 'evt_1',
    object: 'event',
    api_version: '2025-01-27.acacia',
    type: 'checkout.session.completed',
    created: 1_795_000_000,
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    data: { object: { id: 'cs_test_1', object: 'checkout.session', metadata: { orderId: 'o' } } },
  };
  t.ok(
    validate(event),
    `an event as Stripe sends it passes, with fields the schema does not name: ${JSON.stringify(validate.errors)}`,
  );
  t.notOk(validate({ id: 'evt_1', type: 'x' }), 'something that is not an event does not');
});

t.test(
  'info.license is stated without an identifier SPDX does not define (Swagger UI links the identifier)',
  async (t) => {
    const { info } = committed() as unknown as {
      info: { license: { name: string; identifier?: string; url?: string } };
    };
    t.same(
      info.license,
      { name: 'Proprietary: all rights reserved' },
      'a proprietary service: a name, no SPDX identifier, no link',
    );
    const { license } = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
      license?: string;
    };
    t.equal(license, 'UNLICENSED', "package.json says the same in npm's terms");
  },
);

t.test('every operation has tags, a summary, an operationId and a 500 response; 429 unless exempt', async (t) => {
  const document = committed();
  const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ name: `${method} ${path}`, operation })),
  );
  t.ok(operations.length >= 20);
  for (const { name, operation } of operations) {
    t.ok(operation.tags?.length, `${name} has tags`);
    t.ok(operation.summary, `${name} has a summary`);
    t.ok(operation.operationId, `${name} has an operationId`);
    t.ok(operation.responses['500'], `${name} declares 500`);
    // Health probes and Stripe's webhook are exempt from the rate limit, and so declare no 429.
    const exempt = name.includes('/api/health') || name.includes('/api/webhooks/');
    t.equal(Boolean(operation.responses['429']), !exempt, `${name}: 429 declared exactly when rate limited`);
  }
  t.ok(document.components.securitySchemes.bearerAuth, 'bearer scheme');
  const used = new Set(operations.flatMap(({ operation }) => operation.tags ?? []));
  t.same(
    document.tags.map((tag) => tag.name).sort(),
    [...used].sort(),
    'tags appear exactly when they have operations',
  );
});

t.test('enumerations are JSON Schema enums, defined once', async (t) => {
  const text = readFileSync(committedPath, 'utf8');
  const document = committed();
  t.same(document.components.schemas.PackStatus, {
    type: 'string',
    enum: ['draft', 'active', 'archived'],
    description: document.components.schemas.PackStatus?.description,
  });
  t.same((document.components.schemas.Rarity as { enum: string[] }).enum, [
    'common',
    'uncommon',
    'rare',
    'epic',
    'legendary',
  ]);
  t.same((document.components.schemas.TeamRole as { enum: string[] }).enum, ['owner', 'editor', 'viewer']);
  t.equal(
    (text.match(/"enum": \[\s*"draft",\s*"active",\s*"archived"/g) ?? []).length,
    1,
    'the pack statuses are listed once',
  );
  t.equal(
    (text.match(/"enum": \[\s*"draft",\s*"active",\s*"ended"/g) ?? []).length,
    1,
    'the quest statuses are listed once',
  );
  t.notMatch(
    text,
    /"anyOf": \[\s*\{\s*"type": "string",\s*"enum": \[\s*"[a-z]+"\s*\]\s*\},\s*\{\s*"type": "string",\s*"enum"/,
    'no union of single-value enums',
  );
});

t.test('the pack action body is a discriminated union a client can check before sending', async (t) => {
  const document = committed();
  const union = document.components.schemas.PackActionRequest as {
    oneOf: { $ref: string }[];
    discriminator: { propertyName: string; mapping: Record<string, string> };
  };
  t.equal(union.discriminator.propertyName, 'action');
  t.same(Object.keys(union.discriminator.mapping).sort(), [
    'addCollectible',
    'archive',
    'publish',
    'removeCollectible',
    'restore',
  ]);
  t.same(union.oneOf.map((branch) => branch.$ref).sort(), Object.values(union.discriminator.mapping).sort());

  // Validate bodies against the document alone, as a client's validator or type generator sees it.
  // int32 is an OpenAPI format that Ajv does not know; minimum and maximum already bound it.
  const ajv = new Ajv2020({ strict: false, discriminator: true, allErrors: true, formats: { int32: true } });
  const schemas = structuredClone(document.components.schemas) as Record<string, Json>;
  // Ajv refuses the discriminator's `mapping` (an OpenAPI annotation); it follows the tag instead.
  delete (schemas.PackActionRequest as { discriminator: Json }).discriminator.mapping;
  ajv.addSchema({ $id: 'doc', components: { schemas } });
  const check = ajv.compile({ $ref: 'doc#/components/schemas/PackActionRequest' });
  for (const body of [
    { action: 'publish' },
    { action: 'archive' },
    { action: 'restore' },
    { action: 'addCollectible', collectibleId: 'c1' },
    { action: 'addCollectible', collectibleId: 'c1', quantity: 3, weight: 0.5 },
    { action: 'removeCollectible', collectibleId: 'c1' },
  ]) {
    t.ok(check(body), `accepts ${JSON.stringify(body)}`);
  }
  for (const body of [
    { action: 'addCollectible' },
    { action: 'removeCollectible' },
    { action: 'publish', quantity: 3 },
    { action: 'publish', collectibleId: 'c1' },
    { action: 'removeCollectible', collectibleId: 'c1', weight: 2 },
    { action: 'launch' },
    {},
  ]) {
    t.notOk(check(body), `refuses ${JSON.stringify(body)}`);
  }
});

t.test('each error status is one shared response, with an example of that status', async (t) => {
  const document = committed();
  const expected: Record<string, string> = {
    BadRequest: 'validation_failed',
    Unauthorized: 'invalid_token',
    Forbidden: 'forbidden',
    NotFound: 'pack_not_found',
    Conflict: 'invalid_transition',
    TooManyRequests: 'rate_limited',
    InternalError: 'internal_error',
    ServiceUnavailable: 'overloaded',
  };
  for (const [name, code] of Object.entries(expected)) {
    const response = document.components.responses[name] as {
      content: Record<string, { example: { error: { code: string } } }>;
    };
    t.equal(response?.content['application/json']?.example.error.code, code, `${name}: an example of ${code}`);
  }
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        if (Number(status) >= 400)
          t.match(
            response,
            { $ref: /^#\/components\/responses\// },
            `${method} ${path} ${status} refers to the shared response`,
          );
      }
    }
  }
});

t.test(
  'response headers are declared: request id everywhere, rate limits where they apply, caching on the catalog',
  async (t) => {
    const document = committed();
    const headersOf = (path: string, method: string, status: string) =>
      Object.keys((document.paths[path]?.[method]?.responses[status]?.headers as Json) ?? {}).sort();
    t.same(headersOf('/api/packs', 'get', '200'), [
      'Access-Control-Allow-Origin',
      'Cache-Control',
      'ETag',
      'RateLimit',
      'RateLimit-Policy',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'X-Request-Id',
    ]);
    t.same(headersOf('/api/packs/{id}', 'get', '304'), [
      'Access-Control-Allow-Origin',
      'Cache-Control',
      'ETag',
      'RateLimit',
      'RateLimit-Policy',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'X-Request-Id',
    ]);
    t.same(
      headersOf('/api/health', 'get', '200'),
      ['Access-Control-Allow-Origin', 'X-Request-Id'],
      'probes are not rate limited',
    );
    t.same(headersOf('/api/admin/packs', 'post', '201'), [
      'Access-Control-Allow-Origin',
      'RateLimit',
      'RateLimit-Policy',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'X-Request-Id',
    ]);
    const tooMany = document.components.responses.TooManyRequests as { headers: Json };
    t.ok(tooMany.headers['Retry-After'], '429 carries Retry-After');
    t.ok(
      (document.components.responses.Unauthorized as { headers: Json }).headers['WWW-Authenticate'],
      '401 carries WWW-Authenticate',
    );
    t.same(
      (document.components.schemas.AddMemberRequest as { properties: { role: Json } }).properties.role,
      { allOf: [{ $ref: '#/components/schemas/TeamRole' }], default: 'editor' },
      'the role defaults to editor, in the schema',
    );
  },
);

t.test('the first server is relative, so Swagger UI calls the origin it was opened from', async (t) => {
  const document = committed();
  t.equal(document.servers[0]?.url, '/');
  t.same(
    document.servers.slice(1).map((server) => server.url),
    ['https://api.example.com', 'http://localhost:3000'],
    'then PUBLIC_BASE_URL and DEV_BASE_URL',
  );
});

/** Rules whose warnings this API answers by design (see .spectral.yaml for the rules turned off). */
const ACCEPTED_WARNINGS: Record<string, string> = {
  'owasp:api2:2023-read-restricted': 'the public catalog, teams and health are readable by anyone on purpose',
  'owasp:api8:2023-define-error-responses-401': 'public operations take no credentials, so they never answer 401',
  'owasp:api4:2023-string-restricted':
    'names, descriptions and opaque ids have no format; they are bounded by maxLength',
};

t.test('spectral (spectral:oas and the OWASP API Security ruleset) reports zero errors', async (t) => {
  const bin = join(PROJECT_ROOT, 'node_modules', '.bin', 'spectral');
  const { stdout } = await run(
    bin,
    ['lint', 'docs/openapi.json', '--ruleset', '.spectral.yaml', '--format', 'json', '--quiet'],
    {
      cwd: PROJECT_ROOT,
    },
  ).catch((error: { code?: number; stdout?: string }) => {
    // Spectral exits 1 when it finds errors and prints them; anything else means it did not run.
    if (error.code !== 1 || !error.stdout) throw error;
    return { stdout: error.stdout };
  });
  const problems = JSON.parse(stdout) as { severity: number; code: string; message: string; path: string[] }[];
  t.same(
    problems.filter((problem) => problem.severity === 0).map((p) => `${p.code} at ${p.path.join('.')}: ${p.message}`),
    [],
    'no errors',
  );
  const unexpected = problems.filter((problem) => problem.severity === 1 && !(problem.code in ACCEPTED_WARNINGS));
  t.same(
    unexpected.map((p) => `${p.code} at ${p.path.join('.')}`),
    [],
    'no warnings beyond those accepted by design',
  );
  const counts: Record<string, number> = {};
  for (const problem of problems) counts[problem.code] = (counts[problem.code] ?? 0) + 1;
  t.comment(`accepted warnings: ${JSON.stringify(counts)}`);
  const rules = readFileSync(join(PROJECT_ROOT, '.spectral.yaml'), 'utf8');
  t.match(rules, /"@stoplight\/spectral-owasp-ruleset"/, 'the OWASP ruleset is on');
  // Every override (a list item under `overrides:`) is introduced by a comment giving its reason.
  const lines = rules.split('\n');
  const overrides = lines.flatMap((line, index) => (line.startsWith('  - files:') ? [index] : []));
  t.ok(overrides.length > 0);
  for (const index of overrides) t.match(lines[index - 1], /^\s*#/, `the override at line ${index + 1} says why`);
});

import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';

/**
 * Fuzzing from the OpenAPI document: arbitraries that build requests for every operation (valid
 * ones from the schemas, and broken ones), and a checker of every answer against the statuses and
 * schemas the document declares. Used by test/fuzz.test.ts (a bounded run in `npm test`) and
 * `npm run fuzz` (a long one).
 */

type Json = Record<string, unknown>;
export interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean;
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  default?: unknown;
}

export interface Parameter {
  in: 'path' | 'query';
  name: string;
  required?: boolean;
  schema: Schema;
}

export interface Operation {
  method: string;
  path: string;
  operationId: string;
  parameters: Parameter[];
  body?: Schema;
  responses: Record<string, Json>;
  secured: boolean;
}

export interface OpenApiDocument {
  paths: Record<
    string,
    Record<
      string,
      {
        operationId: string;
        parameters?: Parameter[];
        requestBody?: { content: Record<string, { schema: Schema }> };
        responses: Record<string, Json>;
        security?: unknown[];
      }
    >
  >;
  components: { schemas: Record<string, Schema>; responses: Record<string, Json> };
}

export function operationsOf(document: OpenApiDocument): Operation[] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path,
      operationId: operation.operationId,
      parameters: operation.parameters ?? [],
      body: operation.requestBody?.content['application/json']?.schema,
      responses: operation.responses,
      secured: Boolean(operation.security?.length),
    })),
  );
}

/** Text a fuzzer likes: ordinary words, and what broke services before (BOMs, surrogates, NUL, RTL, long runs). */
const nastyText = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom(
    '',
    ' ',
    '\ufeff',
    '\ufeffadmin',
    'a\ud800é\udc00b',
    '\udfff',
    '\u0000',
    'x\u0000y',
    '\u202eevil',
    '../../etc/passwd',
    "' or 1=1 --",
    '%00',
    '{{7*7}}',
    '<script>',
    'NaN',
    'Infinity',
    '-0',
    'null',
    '😀'.repeat(40),
    'x'.repeat(300),
  ),
);

export class SchemaArbitraries {
  constructor(
    private readonly components: Record<string, Schema>,
    private readonly ids: fc.Arbitrary<string>,
  ) {}

  resolve(schema: Schema): Schema {
    let current = schema;
    for (let i = 0; current.$ref && i < 10; i++)
      current = this.components[current.$ref.split('/').pop() as string] ?? {};
    return current;
  }

  /** Values the schema accepts (as far as this generator knows the keywords our schemas use). */
  valid(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
    const s = this.resolve(schema);
    if (s.oneOf) return fc.oneof(...s.oneOf.map((branch) => this.valid(branch, depth + 1)));
    if (s.anyOf) return fc.oneof(...s.anyOf.map((branch) => this.valid(branch, depth + 1)));
    if (s.allOf && !s.type) return this.valid(s.allOf[0] as Schema, depth + 1);
    if (s.enum) return fc.constantFrom(...s.enum);
    if (s.const !== undefined) return fc.constant(s.const);
    const type = Array.isArray(s.type) ? s.type[0] : s.type;
    switch (type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
        return fc.integer({ min: s.minimum ?? -1000, max: Math.min(s.maximum ?? 1_000_000, 2_147_483_647) });
      case 'number':
        return fc.double({
          min: s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1e-6 : (s.minimum ?? -1e6),
          max: s.maximum ?? 1e6,
          noNaN: true,
          noDefaultInfinity: true,
        });
      case 'string':
        return this.string(s);
      case 'array':
        return fc.array(this.valid(s.items ?? {}, depth + 1), {
          minLength: s.minItems ?? 0,
          maxLength: Math.min(s.maxItems ?? 3, 3),
        });
      case 'object': {
        const properties = s.properties ?? {};
        const required = new Set(s.required ?? []);
        const record: Record<string, fc.Arbitrary<unknown>> = {};
        for (const [name, property] of Object.entries(properties)) record[name] = this.valid(property, depth + 1);
        const requiredKeys = [...required].filter((name) => name in record);
        const object = fc.record(record, { requiredKeys });
        // minProperties: 1 on PATCH bodies; an empty object is exercised by the invalid side.
        return s.minProperties ? object.filter((value) => Object.keys(value).length >= (s.minProperties ?? 0)) : object;
      }
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  }

  private string(s: Schema): fc.Arbitrary<string> {
    const maxLength = Math.min(s.maxLength ?? 40, 60);
    const minLength = s.minLength ?? 0;
    if (s.format === 'date-time')
      return fc
        .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
        .map((date) => date.toISOString());
    if (s.format === 'uri')
      return fc.webUrl().filter((url) => url.length <= (s.maxLength ?? 2048) && /^https?:\/\//.test(url));
    if (s.pattern && s.pattern !== '\\S') {
      const pattern = new RegExp(s.pattern);
      const fits = (value: string) =>
        value.length >= minLength && value.length <= (s.maxLength ?? Number.POSITIVE_INFINITY);
      try {
        return fc.stringMatching(pattern).filter(fits);
      } catch {
        // fast-check cannot build every pattern (lookaheads): filter plain strings instead.
        return fc
          .string({ minLength: Math.max(minLength, 1), maxLength })
          .filter((value) => fits(value) && pattern.test(value));
      }
    }
    if (s.maxLength === 128 && minLength === 1) return fc.oneof(this.ids, fc.string({ minLength: 1, maxLength: 20 }));
    return fc
      .string({ minLength: Math.max(minLength, s.pattern === '\\S' ? 1 : 0), maxLength })
      .map((value) => (s.pattern === '\\S' && !/\S/.test(value) ? `x${value}`.slice(0, maxLength) : value));
  }

  /** Values most schemas refuse: wrong types, nasty text, out-of-range numbers, unknown fields, deep or huge documents. */
  invalid(schema: Schema): fc.Arbitrary<unknown> {
    const s = this.resolve(schema);
    const object = s.type === 'object' || s.properties || s.oneOf;
    return fc.oneof(
      nastyText,
      fc.constantFrom(null, true, 0, -1, 1e308, -1e308, 2 ** 53, 1.5, [], {}, [null], { a: { b: { c: [] } } }),
      fc.jsonValue({ maxDepth: 3 }),
      ...(object
        ? [
            this.valid(s).chain((value) =>
              fc
                .record({
                  key: fc.oneof(
                    fc.string({ maxLength: 10 }),
                    fc.constantFrom('__proto__', 'constructor', 'action', '\u0000'),
                  ),
                  extra: fc.jsonValue({ maxDepth: 1 }),
                })
                .map(({ key, extra }) => ({ ...(value as Json), [key]: extra })),
            ),
            this.valid(s).chain((value) =>
              fc.constantFrom(...Object.keys((value as Json) ?? {}), 'none').map((drop) => {
                const copy = { ...(value as Json) };
                delete copy[drop];
                return copy;
              }),
            ),
            this.valid(s).chain((value) =>
              fc
                // An object valid with no properties at all (every field optional) breaks a new one.
                .record({ key: fc.constantFrom(...Object.keys((value as Json) ?? {}), 'x'), broken: nastyText })
                .map(({ key, broken }) => ({ ...(value as Json), [key]: broken })),
            ),
            fc.integer({ min: 40, max: 3000 }).map((depth) => {
              let deep: unknown = 1;
              for (let i = 0; i < depth; i++) deep = { a: deep };
              return deep;
            }),
          ]
        : []),
    );
  }
}

export interface ResponseCheck {
  ok: boolean;
  problem?: string;
}

/** Checks an answer against what the document declares for the operation. */
export class ResponseChecker {
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly document: OpenApiDocument) {
    this.ajv = new Ajv2020({ strict: false, discriminator: true, allErrors: false, validateFormats: true });
    addFormats.default(this.ajv);
    const copy = structuredClone(document) as unknown as Json;
    // Ajv follows the discriminator's tag; the mapping is an OpenAPI annotation it refuses.
    for (const schema of Object.values((copy.components as { schemas: Record<string, Json> }).schemas)) {
      if (schema.discriminator) delete (schema.discriminator as Json).mapping;
    }
    this.ajv.addSchema({ ...copy, $id: 'doc' });
  }

  check(operation: Operation, status: number, contentType: string | undefined, body: string): ResponseCheck {
    if (status >= 500) return { ok: false, problem: `a ${status}` };
    let declared = operation.responses[String(status)];
    if (!declared) return { ok: false, problem: `status ${status} is not declared` };
    const ref = declared.$ref as string | undefined;
    if (ref) declared = this.document.components.responses[ref.split('/').pop() as string] as Json;
    const content = declared.content as Record<string, { schema: Json }> | undefined;
    if (!content)
      return body === ''
        ? { ok: true }
        : { ok: false, problem: `status ${status} declares no body, got ${body.length} bytes` };
    if (!contentType?.startsWith('application/json')) return { ok: false, problem: `content type ${contentType}` };
    const pointer = ref
      ? `#/components/responses/${ref.split('/').pop()}/content/application~1json/schema`
      : `#/paths/${operation.path.replace(/~/g, '~0').replace(/\//g, '~1')}/${operation.method.toLowerCase()}/responses/${status}/content/application~1json/schema`;
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `doc${pointer}` });
      this.validators.set(pointer, validate);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return { ok: false, problem: 'the body is not JSON' };
    }
    return validate(parsed)
      ? { ok: true }
      : { ok: false, problem: `the body breaks the ${status} schema: ${this.ajv.errorsText(validate.errors)}` };
  }
}

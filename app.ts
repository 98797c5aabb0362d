import { randomUUID } from 'node:crypto';
import { AjvCompiler, type ValidatorFactory } from '@fastify/ajv-compiler';
import { type Serializer, type SerializerFactory, SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { FastifyValidationResult } from 'fastify/types/schema.js';
import type { AppConfig } from './config/index.js';
import accessPlugin from './plugins/app/access.js';
import tokensPlugin from './plugins/app/auth/tokens.js';
import dbPlugin, { openDatabase } from './plugins/app/database/index.js';
import { findInputProblem, undeclaredBodyProblem } from './plugins/app/input-guard.js';
import { lazyRequestLogger, RequestLogController } from './plugins/app/request-log.js';
import authPlugin from './plugins/app/auth/index.js';
import auditPlugin from './plugins/app/audit/index.js';
import eventsPlugin from './plugins/app/events/index.js';
import usersPlugin from './plugins/app/users/index.js';
import sessionsPlugin from './plugins/app/sessions/index.js';
import catalogPlugin from './plugins/app/packs/catalog.js';
import collectiblesPlugin from './plugins/app/collectibles/index.js';
import packsPlugin from './plugins/app/packs/index.js';
import openingPlugin from './plugins/app/opening/index.js';
import lockerRoomPlugin from './plugins/app/locker-room/index.js';
import loadSheddingPlugin from './plugins/app/load-shedding.js';
import { shapeDocument } from './plugins/app/openapi.js';
import rateLimitsPlugin, { callerKey } from './plugins/app/rate-limits.js';
import teamsPlugin from './plugins/app/teams/index.js';
import demoPlugin from './plugins/app/demo/index.js';
import freeTextPlugin from './plugins/app/free-text.js';
import idempotencyPlugin from './plugins/app/idempotency/index.js';
import jobsPlugin from './plugins/app/jobs/index.js';
import purchasesPlugin from './plugins/app/purchases/index.js';
import walletsPlugin from './plugins/app/wallets/index.js';
import productsPlugin from './plugins/app/products/index.js';
import checkoutPlugin from './plugins/app/checkout/index.js';
import googlePlayPlugin from './plugins/app/google-play/index.js';
import appStorePlugin from './plugins/app/app-store/index.js';
import rewardsPlugin from './plugins/app/rewards/index.js';
import questsPlugin from './plugins/app/quests/index.js';
import leaguesPlugin from './plugins/app/leagues/index.js';
import leaderboardsPlugin from './plugins/app/leaderboards/index.js';
import appConfigPlugin from './plugins/app/app-config/index.js';
import versionPlugin from './plugins/app/version.js';
import dashboardPlugin from './plugins/app/dashboard/index.js';
import webhooksPlugin from './plugins/app/webhooks/index.js';
import errorsPlugin, { clientErrorHandler, frameworkErrors, notFoundHandler } from './plugins/app/error-handler.js';
import { ServiceUnavailableError, ValidationError } from './plugins/app/errors.js';
import corsPlugin from './plugins/external/cors.js';
import envPlugin from './plugins/external/env.js';
import helmetPlugin from './plugins/external/helmet.js';
import rateLimitPlugin from './plugins/external/rate-limit.js';
import sensiblePlugin from './plugins/external/sensible.js';
import swaggerPlugin from './plugins/external/swagger.js';
import swaggerUiPlugin from './plugins/external/swagger-ui.js';
import apiRoutes from './routes/api/index.js';
import wellKnownRoutes from './routes/well-known/index.js';
import { SHARED_SCHEMAS } from './schemas/index.js';

/** Node's parser refuses larger headers with 431 (answered in the error envelope by clientErrorHandler). */
const MAX_HEADER_BYTES = 16 * 1024;
/** Path ids are up to 128 characters; longer parameters are refused by the router. */
const MAX_PARAM_LENGTH = 256;
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Generated request ids: a random prefix per process and a counter. Unique across instances and
 * restarts for log correlation, at a fraction of a UUID's cost on the hot path.
 */
const REQUEST_ID_PREFIX = randomUUID().slice(0, 8);
let requestCounter = 0;
function nextRequestId(): string {
  requestCounter = (requestCounter + 1) % Number.MAX_SAFE_INTEGER;
  return `${REQUEST_ID_PREFIX}-${requestCounter.toString(36)}`;
}

export type App = FastifyInstance;

/**
 * Validation: bodies are strict (unknown fields rejected, no type coercion, every error reported,
 * unions discriminated by their tag); query strings and path parameters are coerced from text, as
 * they must be, and unknown query parameters are ignored. Both know the shared schemas that
 * routes reference by `$id`.
 */
const ajvCompilers = AjvCompiler();
function buildValidatorCompiler(externalSchemas: unknown) {
  const schemas = externalSchemas as Parameters<typeof ajvCompilers>[0];
  const bodyCompiler = ajvCompilers(schemas, {
    customOptions: { coerceTypes: false, removeAdditional: false, allErrors: true, discriminator: true },
  });
  // Unknown query parameters are dropped, not refused: caches and browsers add their own (`?_=1`).
  const paramsCompiler = ajvCompilers(schemas, { customOptions: { coerceTypes: 'array', removeAdditional: true } });
  return (route: { schema: object; method: string; url: string; httpPart?: string }) =>
    route.httpPart === 'body' ? bodyCompiler(route) : rejectNonFinite(paramsCompiler(route) as Validate);
}

/**
 * Response serializers, one per distinct schema: every route declares the same shared error
 * responses (400, 401, 403, 404, 429, ...), and fast-json-stringify re-checks every shared schema
 * for each serializer it builds. Building each distinct schema once takes ~60% off an app's start
 * (200+ builds to a few dozen). Without serializer options (the app sets none), a serializer
 * depends only on its schema and the shared schemas, so the ones built are kept for the process:
 * a second app built in the same process (every test file builds several) compiles none again.
 */
const serializerSelector = SerializerSelector();
const serializersByContext = new Map<string, Map<string, Serializer>>();
const buildSerializerCompiler: SerializerFactory = (externalSchemas, options) => {
  const compile = serializerSelector(externalSchemas, options);
  // Options may hold functions, which a JSON key cannot tell apart: with options, one app's map.
  let serializers = new Map<string, Serializer>();
  if (options === undefined) {
    const contextKey = JSON.stringify(externalSchemas);
    serializers = serializersByContext.get(contextKey) ?? serializers;
    serializersByContext.set(contextKey, serializers);
  }
  return (route) => {
    const key = JSON.stringify(route.schema);
    let serializer = serializers.get(key);
    if (!serializer) {
      serializer = compile(route);
      serializers.set(key, serializer);
    }
    return serializer;
  };
};

type Validate = FastifyValidationResult & { schemaEnv?: unknown };

/**
 * Ajv coerces `?limit=Infinity` (or `1e400`) to Infinity and lets it past `maximum`: a query or
 * path number must also be finite. Parameters are flat, so one level is all there is to check.
 */
function rejectNonFinite(validate: Validate): Validate {
  const checked = ((data: unknown, context?: unknown) => {
    const result = (validate as (data: unknown, context?: unknown) => ReturnType<Validate>)(data, context);
    checked.errors = validate.errors;
    if (result !== true || !data || typeof data !== 'object') return result;
    const key = Object.keys(data).find((name) => {
      const value = (data as Record<string, unknown>)[name];
      return typeof value === 'number' && !Number.isFinite(value);
    });
    if (key === undefined) return true;
    checked.errors = [
      {
        instancePath: `/${key}`,
        schemaPath: '#/type',
        keyword: 'type',
        params: {},
        message: 'must be a finite number',
      },
    ];
    return false;
  }) as Validate;
  // Fastify passes the parent to validators that can replace a root value.
  checked.schemaEnv = validate.schemaEnv;
  return checked;
}

/** A hop count trusts that many proxies nearest the server (Fastify's types want it as a function). */
function trustProxyOption(
  trustProxy: AppConfig['trustProxy'],
): boolean | string[] | ((address: string, hop: number) => boolean) {
  return typeof trustProxy === 'number' ? (_address, hop) => hop < trustProxy : trustProxy;
}

function loggerOptions(config: AppConfig): FastifyServerOptions['logger'] {
  const pretty = process.stdout.isTTY && !config.isProduction;
  return {
    level: config.logLevel,
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
    ...(pretty
      ? { transport: { target: 'pino-pretty', options: { translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' } } }
      : {}),
  };
}

/**
 * The one app factory: `npm start`, production and every test build the app here, from a
 * validated configuration. Order: plugins/external, plugins/app, then routes.
 */
export async function buildApp(config: AppConfig): Promise<App> {
  const app = Fastify({
    logger: loggerOptions(config),
    trustProxy: trustProxyOption(config.trustProxy),
    bodyLimit: config.bodyLimitBytes,
    requestTimeout: config.requestTimeoutMs,
    // Node checks request timeouts every connectionsCheckingInterval (30 s by default): check often
    // enough that REQUEST_TIMEOUT is honoured within a second.
    http: {
      maxHeaderSize: MAX_HEADER_BYTES,
      // Given here too: Node applies the timeouts it was created with to slow bodies, not ones set later.
      requestTimeout: config.requestTimeoutMs,
      headersTimeout: Math.min(config.requestTimeoutMs, 60_000),
      connectionsCheckingInterval: Math.min(1000, Math.max(100, Math.floor(config.requestTimeoutMs / 2))),
    },
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH, ignoreTrailingSlash: true },
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : nextRequestId();
    },
    clientErrorHandler,
    frameworkErrors,
    forceCloseConnections: 'idle',
    logController: new RequestLogController(),
    childLoggerFactory: lazyRequestLogger,
    // Fastify's own 503 while closing has its own body; ours (below) uses the error envelope.
    return503OnClosing: false,
    schemaController: {
      compilersFactory: {
        buildValidator: buildValidatorCompiler as unknown as ValidatorFactory,
        buildSerializer: buildSerializerCompiler,
      },
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  // The API speaks JSON only: a text/plain body is a 415, not a string handed to validation.
  app.removeContentTypeParser('text/plain');
  // While shutting down, requests on kept-alive connections get 503 and `Connection: close`, so
  // the load balancer retries them on another instance; in-flight requests finish.
  let shuttingDown = false;
  app.addHook('preClose', async () => {
    shuttingDown = true;
  });
  // Hooks on every request are callback-style: an async hook costs a promise per request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (!shuttingDown) return done();
    reply.header('connection', 'close');
    done(new ServiceUnavailableError('shutting_down', 'This instance is shutting down; retry the request.', 1));
  });
  // A request already in flight when shutdown began is answered, then its socket is closed: a
  // client keeping the connection open must not hold the process past its grace period.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (shuttingDown) reply.header('connection', 'close');
    done(null, payload);
  });

  // Checked for every route before validation (pure rules in input-guard.ts): no schema, handler
  // or query meets a NUL, a lone surrogate, or a document built to make checking it expensive.
  app.addHook('preValidation', (request, _reply, done) => {
    for (const [part, value] of [
      ['params', request.params],
      ['querystring', request.query],
      ['body', request.body],
    ] as const) {
      const problem = findInputProblem(value);
      if (problem) {
        const prefix = part === 'body' ? '' : `/${part}`;
        const path = problem.path === '/' ? prefix || '/' : `${prefix}${problem.path}`;
        return done(new ValidationError('The request is not valid.', [{ path, message: problem.message }]));
      }
    }
    // A route that declares no body refuses one: DELETE /api/user with {"x":1} is a mistake, not a request.
    const bodyProblem = request.routeOptions.schema?.body ? undefined : undeclaredBodyProblem(request.body);
    if (bodyProblem) return done(new ValidationError('The request is not valid.', [bodyProblem]));
    done();
  });

  // The error envelope first, so every later plugin's routes and hooks answer with it; then the
  // access rule every route must declare, before any route exists.
  await app.register(errorsPlugin);
  await app.register(accessPlugin);

  // plugins/external, with their policy from plugins/app. Token verification (@fastify/jwt) and
  // load shedding (@fastify/under-pressure) are policy themselves: plugins/app registers them, here,
  // so that every later hook and route meets them as before.
  await app.register(envPlugin, { config });
  await app.register(sensiblePlugin);
  await app.register(helmetPlugin);
  await app.register(corsPlugin);
  await app.register(tokensPlugin);
  await app.register(rateLimitPlugin, { keyGenerator: callerKey(app) });
  await app.register(loadSheddingPlugin);
  await app.register(swaggerPlugin, { shapeDocument });
  await app.register(swaggerUiPlugin);

  // plugins/app. The database opens outside Fastify's 10 s plugin timeout: a first start runs
  // initdb and every migration, which a loaded machine may not finish in time.
  const database = await openDatabase(config, app.log);
  try {
    await app.register(dbPlugin, { database });
    await app.register(eventsPlugin);
    await app.register(auditPlugin);
    await app.register(usersPlugin);
    await app.register(sessionsPlugin);
    await app.register(authPlugin);
    await app.register(rateLimitsPlugin);
    await app.register(teamsPlugin);
    await app.register(catalogPlugin);
    await app.register(collectiblesPlugin);
    await app.register(walletsPlugin);
    await app.register(productsPlugin);
    await app.register(checkoutPlugin);
    await app.register(googlePlayPlugin);
    await app.register(appStorePlugin);
    await app.register(purchasesPlugin);
    await app.register(packsPlugin);
    await app.register(rewardsPlugin);
    await app.register(questsPlugin);
    await app.register(idempotencyPlugin);
    await app.register(freeTextPlugin);
    await app.register(openingPlugin);
    await app.register(lockerRoomPlugin);
    await app.register(leaguesPlugin);
    await app.register(leaderboardsPlugin);
    await app.register(appConfigPlugin);
    await app.register(versionPlugin);
    await app.register(dashboardPlugin);
    await app.register(webhooksPlugin);
    await app.register(jobsPlugin);
    await app.register(demoPlugin);

    // Unknown routes are rate limited like known ones, then answered 404 at once: their body is
    // never read or parsed.
    const limitUnknownRoute = app.rateLimit();
    app.addHook('onRequest', (request, reply, done) => {
      if (!request.is404) return done();
      limitUnknownRoute.call(app, request, reply).then(() => {
        if (!reply.sent) notFoundHandler(request, reply);
      }, done);
    });

    // routes
    await app.register(apiRoutes, { prefix: '/api' });
    await app.register(wellKnownRoutes, { prefix: '/.well-known' });
    app.setNotFoundHandler(notFoundHandler);
  } catch (error) {
    await database.close();
    throw error;
  }

  return app;
}

import t from 'tap';
import { ConfigError, loadConfig } from '../../config/index.js';

// WEBHOOKS_ALLOW_PRIVATE_TARGETS: off by default, on only where the environment says so, and a
// production service that asks for it does not start.

const PRODUCTION = { NODE_ENV: 'production', AUTH_JWT_SECRET: 'a-production-secret-of-at-least-32-characters' };

function configError(env: Record<string, string>): Error | undefined {
  try {
    loadConfig(env);
  } catch (error) {
    return error as Error;
  }
  return undefined;
}

t.test('off by default, in development and in production', async (t) => {
  t.same(loadConfig({}).webhooks, { allowPrivateTargets: false });
  t.same(loadConfig(PRODUCTION).webhooks, { allowPrivateTargets: false });
  t.same(loadConfig({ ...PRODUCTION, WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'false' }).webhooks, {
    allowPrivateTargets: false,
  });
  t.same(loadConfig({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: '' }).webhooks, { allowPrivateTargets: false }, 'empty is unset');
});

t.test('development and tests may turn it on', async (t) => {
  t.same(loadConfig({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' }).webhooks, { allowPrivateTargets: true });
  t.same(loadConfig({ NODE_ENV: 'test', WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' }).webhooks, {
    allowPrivateTargets: true,
  });
  // Not tied to the development defaults: a development server on another interface may use it too.
  t.same(
    loadConfig({ HOST: '0.0.0.0', AUTH_JWT_SECRET: PRODUCTION.AUTH_JWT_SECRET, WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' })
      .webhooks,
    {
      allowPrivateTargets: true,
    },
  );
});

t.test('production refuses to start with it, naming the variable', async (t) => {
  const error = configError({ ...PRODUCTION, WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' });
  t.ok(error instanceof ConfigError, 'a ConfigError');
  t.match(error?.message, /^Invalid configuration: WEBHOOKS_ALLOW_PRIVATE_TARGETS must not be true in production/);
});

t.test('a value that is not a boolean is refused, naming the variable', async (t) => {
  for (const value of ['yes', 'on', 'maybe']) {
    const error = configError({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: value });
    t.ok(error instanceof ConfigError, `${value}: a ConfigError`);
    t.match(error?.message, /^Invalid configuration: WEBHOOKS_ALLOW_PRIVATE_TARGETS\b/);
  }
});

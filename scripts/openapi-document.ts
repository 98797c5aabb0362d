import { buildApp } from '../app.js';
import { loadConfig } from '../config/index.js';

/**
 * The OpenAPI document as the app generates it, from fixed settings (defaults, an in-memory
 * database) so the committed docs/openapi.json does not depend on who generated it.
 */
export async function generateOpenApiDocument(): Promise<string> {
  const config = loadConfig({
    NODE_ENV: 'production',
    AUTH_JWT_SECRET: 'openapi-export-only-secret-0123456789abcdef',
    PUBLIC_BASE_URL: 'https://api.example.com',
    DATA_DIR: 'memory://',
    LOG_LEVEL: 'silent',
    MAX_EVENT_LOOP_DELAY: '0',
  });
  const app = await buildApp(config);
  try {
    await app.ready();
    return `${JSON.stringify(app.swagger(), null, 2)}\n`;
  } finally {
    await app.close();
  }
}

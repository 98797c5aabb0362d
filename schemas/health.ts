import { Type } from '@sinclair/typebox';
import { Envelope, StrictObject, StringEnum } from './common.js';
import { DATABASE_ENGINES } from './enums.js';

export const Liveness = Envelope(
  StrictObject({
    status: Type.Literal('ok'),
    uptimeSeconds: Type.Number({ minimum: 0, maximum: 1e10 }),
  }),
);

export const Readiness = Envelope(
  StrictObject({
    status: Type.Literal('ready'),
    database: StringEnum(DATABASE_ENGINES, {
      description:
        '`embedded`: the PostgreSQL server the service runs in DATA_DIR; `external`: the one at DATABASE_URL',
    }),
  }),
);

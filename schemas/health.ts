import { Type } from '@sinclair/typebox';
import { Envelope } from './common.js';

export const Liveness = Envelope(
  Type.Object(
    {
      status: Type.Literal('ok'),
      uptimeSeconds: Type.Number({ minimum: 0 }),
    },
    { additionalProperties: false },
  ),
);

export const Readiness = Envelope(
  Type.Object(
    {
      status: Type.Literal('ready'),
      database: Type.Union([Type.Literal('pglite'), Type.Literal('postgres')]),
    },
    { additionalProperties: false },
  ),
);

import { Type } from '@sinclair/typebox';
import { Int } from './common.js';
import { CRON_JOBS } from './enums.js';

export const JobResult = Type.Object(
  {
    job: Type.Ref('CronJob'),
    processed: Int({ description: 'What the run did: the purchases it expired, or the orders it settled' }),
    expired: Type.Optional(
      Int({ description: '`expire-purchases`: purchases marked expired (the same as `processed`)' }),
    ),
  },
  { $id: 'JobResult', additionalProperties: false },
);

export const JobParams = Type.Object(
  {
    job: Type.String({
      minLength: 1,
      maxLength: 64,
      description: `One of: ${CRON_JOBS.join(', ')}`,
      examples: [...CRON_JOBS],
    }),
  },
  { additionalProperties: false },
);

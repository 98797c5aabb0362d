import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { NotFoundError } from '../../../plugins/app/errors.js';
import { Envelope, errorResponses } from '../../../schemas/common.js';
import { CRON_JOBS } from '../../../schemas/enums.js';
import { JobParams, JobResult } from '../../../schemas/jobs.js';

const isJob = (name: string): name is (typeof CRON_JOBS)[number] => (CRON_JOBS as readonly string[]).includes(name);

const cronRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/:job',
    {
      config: { auth: 'cron' },
      schema: {
        tags: ['Cron'],
        summary: 'Run a scheduled job now',
        description:
          'For an external scheduler, with `Authorization: Bearer <CRON_SECRET>` (401 otherwise). Jobs: ' +
          '`expire-purchases` (pending purchases past their time, and idempotency records past their retention), ' +
          '`expire-orders` (pending orders past their time: their Checkout Session expired at Stripe, or the order fulfilled if it was paid), ' +
          '`reconcile-orders` (pending orders older than a minute re-checked with Stripe; a paid one is fulfilled). ' +
          'The same jobs run in-process every minute unless CRON_INTERNAL=false. One run of a job at a time across every instance: ' +
          'while one is under way, 409 `job_running`. Every run is recorded with its outcome. 404 `job_not_found` for another name.',
        operationId: 'runJob',
        params: JobParams,
        response: { 200: Envelope(Type.Ref(JobResult)), ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const { job } = request.params;
      if (!isJob(job))
        throw new NotFoundError(
          'job_not_found',
          `No job ${JSON.stringify(job.slice(0, 64))}; the jobs are ${CRON_JOBS.join(', ')}.`,
        );
      return { success: true as const, data: await app.jobs.run(job, 'request') };
    },
  );
};

export default cronRoutes;

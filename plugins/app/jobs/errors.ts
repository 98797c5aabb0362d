import { ConflictError } from '../errors.js';

export const jobRunning = (job: string) =>
  new ConflictError('job_running', `A run of ${job} is under way on this or another instance; try again when it ends.`);

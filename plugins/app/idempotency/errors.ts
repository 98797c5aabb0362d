import { AppError, ConflictError } from '../errors.js';

export const keyInUse = () =>
  new ConflictError(
    'idempotency_key_in_use',
    'A request with this Idempotency-Key is still being processed; retry when it has finished.',
  );
export const keyReused = () =>
  new AppError(
    422,
    'idempotency_key_reused',
    'This Idempotency-Key was used with a different request; use a new key for a new request.',
  );

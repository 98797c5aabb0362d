import { ValidationError } from '../errors.js';

/** The errors a dashboard query is refused with (400: a schema cannot say these). */

export const invalidTimeZone = (name: string) =>
  new ValidationError(
    `"${String(name).slice(0, 64)}" is not a time zone of the IANA database (e.g. Europe/Paris, UTC).`,
    [{ path: '/timeZone', message: 'is not an IANA time zone' }],
    'invalid_time_zone',
  );

export const invalidRange = (path: '/from' | '/to', message: string) =>
  new ValidationError(`The range is not valid: ${path.slice(1)} ${message}.`, [{ path, message }], 'invalid_range');

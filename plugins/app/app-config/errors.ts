import { ConflictError } from '../errors.js';

/** The errors of the mobile app configuration, made in one place. */

export const appConfigChanged = (expected: number, stored: number) =>
  new ConflictError(
    'app_config_changed',
    `The app configuration was edited meanwhile (version ${stored}, this edit was made from version ${expected}): read it again and redo the edit.`,
  );

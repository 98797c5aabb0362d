import { pgliteTemplate } from '../../plugins/app/database/pglite-template.js';

// Runs once before the suite (tap's "before"), so parallel test files load the cached template
// instead of each running initdb.
await pgliteTemplate();

/**
 * Which of the two runs a test belongs to. `npm test` runs everything on the embedded PostgreSQL;
 * `npm run test:pg` runs the same suite on the external server at TEST_DATABASE_URL, except what
 * that server changes nothing for.
 */

const external = Boolean(process.env.TEST_DATABASE_URL);

/** Tests that start embedded servers of their own, whatever the suite's server: they run in `npm test` only. */
export const onlyEmbedded = {
  skip: external ? 'the embedded server is tested by npm test; test:pg covers the external one' : false,
};

/** Pure rules that touch no database: the same on either server, so `npm test` runs them once. */
export const databaseIndependent = {
  skip: external ? 'touches no database: npm test runs it' : false,
};

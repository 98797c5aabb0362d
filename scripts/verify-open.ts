import { readFileSync } from 'node:fs';
import { Value } from '@sinclair/typebox/value';
import { type DrawProof, verifyDrawProof } from '../plugins/app/packs/draw.js';
import { DrawStep, FairnessPoolEntry, FairnessProof } from '../schemas/purchases.js';

/**
 * Checks a pack open saved from the API, with nothing but the file:
 *   npm run verify-open -- open.json
 * The file holds the open response (`{ data: { ..., fairness } }`, or what `data` holds) or its
 * `fairness` object alone. Recomputes every draw from the revealed seeds and pool, checks the
 * seed against the hash published at purchase, and exits 0 when it all checks out, 1 when not.
 */

const usage = 'usage: npm run verify-open -- <file.json>';

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

const path = process.argv[2];
if (!path || path === '--help') fail(usage);

let parsed: unknown;
try {
  parsed = JSON.parse(readFileSync(path, 'utf8'));
} catch (error) {
  fail(`cannot read ${path} as JSON: ${(error as Error).message}`);
}

/** The proof wherever the saved file holds it. */
function findProof(value: unknown): Record<string, unknown> | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const object = value as Record<string, unknown>;
  if ('draws' in object && 'serverSeed' in object) return object;
  return findProof(object.fairness) ?? findProof(object.data);
}

const proof = findProof(parsed);
if (!proof)
  fail(
    `${path} holds no open result: expected its "fairness" object (serverSeed, serverSeedHash, clientSeed, pool, draws)`,
  );

// The proof's shape is the API's own schema: anything the API could answer passes, nothing else.
const shapeProblems = [...Value.Errors(FairnessProof, [FairnessPoolEntry, DrawStep], proof)]
  .slice(0, 10)
  .map((error) => `${error.path || '/'} ${error.message}`);
if (shapeProblems.length > 0) fail(`${path}: not an open's proof: ${shapeProblems.join('; ')}`);

const problems = verifyDrawProof(proof as DrawProof);
if (problems.length > 0) {
  console.log(`${path}: does NOT check out`);
  for (const problem of problems) console.log(`- ${problem}`);
  process.exit(1);
}
const draws = proof.draws as DrawProof['draws'];
console.log(
  `${path}: checks out. The server seed matches the hash published at purchase, and all ${draws.length} draws recompute:`,
);
for (const draw of draws)
  console.log(
    `- draw ${draw.k}: ${draw.collectibleId}, serial position ${draw.position} of ${draw.unminted} unminted, serial #${draw.serialNumber}`,
  );

import { readFileSync } from 'node:fs';
import { type DrawProof, verifyDrawProof } from '../plugins/app/packs/draw.js';

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
if (!proof) fail(`${path} holds no open result: expected its "fairness" object (serverSeed, serverSeedHash, clientSeed, pool, draws)`);

const isEntry = (entry: unknown) => {
  const e = entry as Record<string, unknown>;
  return !!e && typeof e.collectibleId === 'string' && typeof e.weight === 'number' && Number.isInteger(e.remaining);
};
const isDraw = (draw: unknown) => {
  const d = draw as Record<string, unknown>;
  return !!d && ['k', 'u', 'v', 'unminted', 'position', 'serialNumber'].every((field) => typeof d[field] === 'number') && typeof d.collectibleId === 'string';
};
const shapeProblems = [
  typeof proof.serverSeed !== 'string' && 'serverSeed is not a string',
  typeof proof.serverSeedHash !== 'string' && 'serverSeedHash is not a string',
  typeof proof.clientSeed !== 'string' && 'clientSeed is not a string',
  !(Array.isArray(proof.pool) && proof.pool.every(isEntry)) && 'pool is not a list of { collectibleId, weight, remaining }',
  !(Array.isArray(proof.draws) && proof.draws.every(isDraw)) && 'draws is not a list of { k, u, v, collectibleId, unminted, position, serialNumber }',
].filter((problem): problem is string => typeof problem === 'string');
if (shapeProblems.length > 0) fail(`${path}: ${shapeProblems.join('; ')}`);

const problems = verifyDrawProof(proof as unknown as DrawProof);
if (problems.length > 0) {
  console.log(`${path}: does NOT check out`);
  for (const problem of problems) console.log(`- ${problem}`);
  process.exit(1);
}
const draws = proof.draws as DrawProof['draws'];
console.log(`${path}: checks out. The server seed matches the hash published at purchase, and all ${draws.length} draws recompute:`);
for (const draw of draws) console.log(`- draw ${draw.k}: ${draw.collectibleId}, serial position ${draw.position} of ${draw.unminted} unminted, serial #${draw.serialNumber}`);

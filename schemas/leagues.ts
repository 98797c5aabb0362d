import { type Static, type TOptional, type TSchema, Type } from '@sinclair/typebox';
import { Id, Int, StrictObject } from './common.js';
import { RARITIES, Rarity } from './enums.js';

/**
 * The shapes of a league's rules, its prize bands and a round's scores. Schemas with an `$id`
 * must be registered in SHARED_SCHEMAS (schemas/index.ts) before a route references them.
 * What JSON Schema cannot say (two decimals at most, caps within the lineup, bands that do not
 * overlap) is checked by plugins/app/leagues/rules.ts.
 */

/** The most copies a lineup may hold (a football side). */
export const MAX_LINEUP_SIZE = 11;
/** The most teams whose collectibles a league may accept. */
export const MAX_ELIGIBLE_TEAMS = 20;
/** The most prize bands a league may have, and the last rank a band may reach. */
export const MAX_PRIZE_BANDS = 20;
export const MAX_PRIZE_RANK = 100_000;
/** A collectible's points in one round are integers within ±100 000. */
export const MAX_ROUND_SCORE = 100_000;
/** A rarity's multiplier: 0.01 to 100, two decimals at most. */
export const MULTIPLIER_RANGE = { minimum: 0.01, maximum: 100 } as const;

/** One optional property per rarity, in the order of RARITIES. */
function perRarity<T extends TSchema>(schema: () => T): Record<Rarity, TOptional<T>> {
  const optional = (): TOptional<T> => Type.Optional(schema()) as TOptional<T>;
  return Object.fromEntries(RARITIES.map((rarity) => [rarity, optional()])) as Record<Rarity, TOptional<T>>;
}

export const LeagueEligibility = StrictObject(
  {
    teamIds: Type.Optional(
      Type.Array(Id, {
        minItems: 1,
        maxItems: MAX_ELIGIBLE_TEAMS,
        uniqueItems: true,
        description:
          "Teams whose collectibles may be fielded. When absent, only the league's own team's collectibles are eligible; list the league's own team too when it should stay eligible",
        examples: [['7d9f3c1e-2b8a-4f6d-9e0a-1c2b3d4e5f60']],
      }),
    ),
    minRarity: Type.Optional(
      Type.Ref(Rarity, {
        description: 'Only copies of this rarity or rarer (in the order common, uncommon, rare, epic, legendary)',
      }),
    ),
  },
  {
    description: 'Which copies may be fielded; every condition given must hold',
    examples: [{}, { minRarity: 'rare' }],
  },
);
export type LeagueEligibility = Static<typeof LeagueEligibility>;

export const RarityCaps = StrictObject(
  perRarity(() =>
    Int({ minimum: 0, maximum: MAX_LINEUP_SIZE, description: 'The most copies of this rarity in one lineup' }),
  ),
  {
    description:
      'The most copies of each rarity a lineup may hold, each at most `lineupSize`; a rarity not listed is not capped, a cap of 0 keeps the rarity out',
    examples: [{ legendary: 1, epic: 2 }],
  },
);
export type RarityCaps = Static<typeof RarityCaps>;

export const RarityMultipliers = StrictObject(
  perRarity(() =>
    Type.Number({
      ...MULTIPLIER_RANGE,
      description: "What this rarity's points are multiplied by: 0.01 to 100, two decimals at most",
      examples: [1.15],
    }),
  ),
  {
    description: 'Points multiplier of each rarity; a rarity not listed counts its points once (1)',
    examples: [{ rare: 1.15, epic: 1.5, legendary: 2 }],
  },
);
export type RarityMultipliers = Static<typeof RarityMultipliers>;

export const LeagueRules = StrictObject(
  {
    lineupSize: Int({
      minimum: 1,
      maximum: MAX_LINEUP_SIZE,
      description: 'Exactly how many copies a lineup holds',
      examples: [5],
    }),
    eligible: LeagueEligibility,
    rarityCaps: Type.Optional(RarityCaps),
    multipliers: Type.Optional(RarityMultipliers),
  },
  {
    $id: 'LeagueRules',
    description:
      "How fans field lineups: the lineup's size, which copies are eligible, how many of each rarity, and what each rarity's points are worth",
    examples: [
      {
        lineupSize: 5,
        eligible: { minRarity: 'uncommon' },
        rarityCaps: { legendary: 1 },
        multipliers: { rare: 1.15, epic: 1.5, legendary: 2 },
      },
    ],
  },
);
export type LeagueRules = Static<typeof LeagueRules>;

const rank = (description: string) => Int({ minimum: 1, maximum: MAX_PRIZE_RANK, description, examples: [1] });

export const PrizeBand = StrictObject(
  {
    fromRank: rank('First rank of the band'),
    toRank: rank('Last rank of the band (inclusive), at least `fromRank`'),
    rewardId: Type.String({ ...Id, description: 'The reward each winner of the band receives' }),
  },
  {
    $id: 'PrizeBand',
    description:
      'Every fan whose rank is within `fromRank`..`toRank` wins the reward. Ranks are competition ranks, so fans tied on a rank inside the band all win (a band 1-3 with ranks 1, 2, 2, 2 pays four fans)',
    examples: [{ fromRank: 1, toRank: 3, rewardId: '7d9f3c1e-2b8a-4f6d-9e0a-1c2b3d4e5f60' }],
  },
);
export type PrizeBand = Static<typeof PrizeBand>;

export const Prizes = Type.Array(Type.Ref(PrizeBand), {
  maxItems: MAX_PRIZE_BANDS,
  description: 'Prize bands by rank; they must not overlap',
});
export type Prizes = Static<typeof Prizes>;

export const RoundScore = StrictObject(
  {
    collectibleId: Id,
    score: Int({
      minimum: -MAX_ROUND_SCORE,
      maximum: MAX_ROUND_SCORE,
      description: "The collectible's performance points in the round, an integer (negative for a bad day)",
      examples: [12, -3],
    }),
  },
  {
    $id: 'RoundScore',
    description: "A collectible's points in one round; every fielded copy of it earns them, times its multiplier",
    examples: [{ collectibleId: '7d9f3c1e-2b8a-4f6d-9e0a-1c2b3d4e5f60', score: 12 }],
  },
);
export type RoundScore = Static<typeof RoundScore>;

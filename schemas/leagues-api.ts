import { type Static, Type } from '@sinclair/typebox';
import {
  Description,
  Envelope,
  Id,
  Int,
  Name,
  Nullable,
  Page,
  PageQuery,
  StrictObject,
  Text,
  Timestamp,
} from './common.js';
import { LeagueStatus, Rarity, RoundStatus } from './enums.js';
import { SeasonKey } from './leaderboards.js';
import { LeagueRules, MAX_LINEUP_SIZE, Prizes, RoundScore } from './leagues.js';

/**
 * The API shapes of leagues, rounds, lineups and scores (routes/api/leagues,
 * routes/api/admin/leagues); the rules' own shapes are in schemas/leagues.ts.
 */

/** The most scored collectibles one round holds, and one scores request posts. */
export const MAX_ROUND_SCORES = 5_000;
export const MAX_SCORES_PER_REQUEST = 500;

const leagueName = Name(120, ['Premier Fantasy']);
const leagueDescription = Description(['Field five cards each matchday; the best lineup wins a legendary pack.']);
const roundName = Name(120, ['Matchday 14']);

/** An IANA time zone name; that the tz database knows it is checked by the service. */
const timeZone = Text(64, {
  minLength: 1,
  pattern: '^[A-Za-z][A-Za-z0-9_+\\-]*(/[A-Za-z0-9_+\\-]+)*$',
  description: "IANA time zone the league's weeks are counted in, e.g. `Europe/London`",
  examples: ['Europe/London'],
});

export const League = StrictObject(
  {
    id: Id,
    teamId: Id,
    name: Text(120),
    description: Text(2000),
    rules: Type.Ref(LeagueRules),
    timeZone,
    season: SeasonKey,
    status: Type.Ref(LeagueStatus),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  {
    $id: 'League',
    description:
      "A team's fantasy competition. `season` is the current season: rounds created take it. Archived leagues take no new rounds and stay readable",
  },
);
export type League = Static<typeof League>;

export const CreateLeagueBody = StrictObject(
  {
    teamId: Type.String({ ...Id, description: 'The owning team' }),
    name: leagueName,
    description: Type.Optional(leagueDescription),
    rules: Type.Ref(LeagueRules),
    timeZone: Type.Optional(Type.String({ ...timeZone, default: 'UTC' })),
    season: SeasonKey,
  },
  {
    $id: 'CreateLeagueRequest',
    examples: [
      {
        teamId: '7d9f3c1e-2b8a-4f6d-9e0a-1c2b3d4e5f60',
        name: 'Premier Fantasy',
        rules: { lineupSize: 5, eligible: {}, multipliers: { legendary: 2 } },
        season: '2026-27',
      },
    ],
  },
);
export type CreateLeagueBody = Static<typeof CreateLeagueBody>;

export const UpdateLeagueBody = StrictObject(
  {
    name: Type.Optional(leagueName),
    description: Type.Optional(leagueDescription),
    season: Type.Optional(SeasonKey),
    status: Type.Optional(Type.Ref(LeagueStatus)),
    timeZone: Type.Optional(timeZone),
    rules: Type.Optional(Type.Ref(LeagueRules)),
  },
  {
    $id: 'UpdateLeagueRequest',
    minProperties: 1,
    description: 'Rules change only while no round of the league is locked or final',
    examples: [{ season: '2027-28' }, { status: 'archived' }],
  },
);
export type UpdateLeagueBody = Static<typeof UpdateLeagueBody>;

export const Round = StrictObject(
  {
    id: Id,
    leagueId: Id,
    name: Text(120),
    season: SeasonKey,
    opensAt: Timestamp,
    locksAt: Timestamp,
    endsAt: Timestamp,
    finalizesAt: Nullable(Timestamp),
    prizes: Prizes,
    status: Type.Ref(RoundStatus),
    finalizedAt: Nullable(Timestamp),
    standingsHash: Nullable(Text(64, { description: 'SHA-256 (hex) of the final standings; see docs/leagues.md' })),
    entrants: Nullable(Int({ description: 'Lineups ranked; null until final' })),
    prizesPaidAt: Nullable(Timestamp),
    createdAt: Timestamp,
  },
  {
    $id: 'Round',
    description:
      'One round of a league: lineups are accepted from `opensAt` until `locksAt`, play runs from `locksAt` to `endsAt`, and the standings freeze when it is finalized (by an admin, or by the job at `finalizesAt`). `status` is computed from the times at the moment of the answer',
  },
);
export type Round = Static<typeof Round>;

const instant = (description: string) => Type.String({ ...Timestamp, description });

export const CreateRoundBody = StrictObject(
  {
    name: roundName,
    opensAt: instant('Lineups accepted from this instant'),
    locksAt: instant('Lineups frozen from this instant; play starts'),
    endsAt: instant('End of play'),
    finalizesAt: Type.Optional(
      Nullable(instant('When the job finalizes the round, at or after endsAt; null or absent: an admin does')),
    ),
    prizes: Type.Optional(Prizes),
  },
  {
    $id: 'CreateRoundRequest',
    examples: [
      {
        name: 'Matchday 14',
        opensAt: '2026-11-27T09:00:00.000Z',
        locksAt: '2026-11-28T15:00:00.000Z',
        endsAt: '2026-11-28T22:00:00.000Z',
        finalizesAt: '2026-11-29T09:00:00.000Z',
        prizes: [{ fromRank: 1, toRank: 3, rewardId: '7d9f3c1e-2b8a-4f6d-9e0a-1c2b3d4e5f60' }],
      },
    ],
  },
);
export type CreateRoundBody = Static<typeof CreateRoundBody>;

export const UpdateRoundBody = StrictObject(
  {
    name: Type.Optional(roundName),
    opensAt: Type.Optional(instant('Upcoming rounds only')),
    locksAt: Type.Optional(instant('Not in the past')),
    endsAt: Type.Optional(instant('End of play')),
    finalizesAt: Type.Optional(Nullable(instant('At or after endsAt; null: an admin finalizes'))),
    prizes: Type.Optional(Prizes),
  },
  {
    $id: 'UpdateRoundRequest',
    minProperties: 1,
    description:
      'Upcoming: any field (new prizes release the stock the old ones held and promise theirs, or 409). Open: name, locksAt (not before now), endsAt, finalizesAt. Locked or final: nothing',
    examples: [{ locksAt: '2026-11-28T15:30:00.000Z' }],
  },
);
export type UpdateRoundBody = Static<typeof UpdateRoundBody>;

export const LineupBody = StrictObject(
  {
    pullIds: Type.Array(Id, {
      maxItems: MAX_LINEUP_SIZE,
      description: "Exactly the league's `lineupSize` copies (pull ids) the caller owns, each once",
    }),
  },
  { $id: 'LineupRequest', examples: [{ pullIds: ['p-1', 'p-2', 'p-3', 'p-4', 'p-5'] }] },
);
export type LineupBody = Static<typeof LineupBody>;

export const LineupEntry = StrictObject({
  position: Int({ maximum: MAX_LINEUP_SIZE - 1, description: 'Index in `pullIds`' }),
  pullId: Id,
  collectibleId: Id,
  rarity: Type.Ref(Rarity),
});

export const Lineup = StrictObject(
  {
    roundId: Id,
    userId: Id,
    pullIds: Type.Array(Id, { maxItems: MAX_LINEUP_SIZE }),
    entries: Type.Array(LineupEntry, { maxItems: MAX_LINEUP_SIZE }),
    submittedAt: instant(
      'When the lineup last changed its copies: a save of the same copies (in any order) keeps it. The tie-breaker "earliest submission"',
    ),
    updatedAt: instant('When the lineup was last saved with a change (copies or their order)'),
  },
  { $id: 'Lineup' },
);
export type Lineup = Static<typeof Lineup>;

export const RoundScoresBody = Type.Array(Type.Ref(RoundScore), {
  minItems: 1,
  maxItems: MAX_SCORES_PER_REQUEST,
  description: 'Scores to set; a collectible named twice is refused',
});
export type RoundScoresBody = Static<typeof RoundScoresBody>;

export const RoundScores = StrictObject(
  {
    roundId: Id,
    scores: Type.Array(Type.Ref(RoundScore), { maxItems: MAX_ROUND_SCORES, description: 'By collectibleId' }),
  },
  { $id: 'RoundScores' },
);
export type RoundScores = Static<typeof RoundScores>;

export const LeagueParams = StrictObject({ id: Id });
export const RoundParams = StrictObject({ id: Id, roundId: Id });
export type RoundParams = Static<typeof RoundParams>;

export const LeagueListQuery = PageQuery({ teamId: Type.Optional(Id) });
export type LeagueListQuery = Static<typeof LeagueListQuery>;
export const RoundListQuery = PageQuery({});
export type RoundListQuery = Static<typeof RoundListQuery>;

export const LeagueResponse = Envelope(Type.Ref(League));
export const LeaguePage = Page(Type.Ref(League));
export const RoundResponse = Envelope(Type.Ref(Round));
export const RoundPage = Page(Type.Ref(Round));
export const LineupResponse = Envelope(Type.Ref(Lineup));
export const RoundScoresResponse = Envelope(Type.Ref(RoundScores));

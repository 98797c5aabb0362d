import { type Static, Type } from '@sinclair/typebox';
import { Envelope, Id, Nullable, Text, Timestamp } from './common.js';
import { PackStatus, Rarity } from './enums.js';

/** The dashboards: a team's (GET /api/admin/teams/{teamId}/dashboard) and the platform's (GET /api/admin/dashboard). */

/** Sums of a year of events can pass int32: any whole number JavaScript holds exactly. */
const Count = (description: string) =>
  Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description });
const LocalDate = (description: string) =>
  Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', maxLength: 10, description, examples: ['2026-03-29'] });

export const DashboardQuery = Type.Object(
  {
    from: Type.Optional(LocalDate('First local date included (default: 30 days before `to`)')),
    to: Type.Optional(
      LocalDate('First local date NOT included (default: the day after today in `timeZone`, so today is included)'),
    ),
    timeZone: Type.Optional(
      Text(64, {
        minLength: 1,
        description: 'IANA time zone whose days the series counts (default `UTC`); the range is at most 366 days',
        examples: ['Europe/Paris'],
      }),
    ),
  },
  { additionalProperties: false },
);
export type DashboardQuery = Static<typeof DashboardQuery>;

export const DashboardTeamParams = Type.Object({ teamId: Id }, { additionalProperties: false });

const PullsByRarity = Type.Object(
  {
    common: Count('Copies of common collectibles pulled'),
    uncommon: Count('Copies of uncommon collectibles pulled'),
    rare: Count('Copies of rare collectibles pulled'),
    epic: Count('Copies of epic collectibles pulled'),
    legendary: Count('Copies of legendary collectibles pulled'),
  },
  { additionalProperties: false },
);

const figures = {
  packsSold: Count('Purchases completed (purchase.completed)'),
  packsOpened: Count('Packs opened, bought or granted (pack.opened)'),
  coinsTaken: Count('Coins paid for the packs sold (the prices of purchase.completed)'),
  pulls: PullsByRarity,
  questCompletions: Count("Fans who completed one of the team's quests for a period (quest.completed)"),
  grants: Count("Rewards the team's bundles gave (reward.granted)"),
  leagueEntries: Count("Lineups ranked in the team's finalized rounds (round.finalized entrants)"),
};

export const DashboardTotals = Type.Object(
  { ...figures, uniqueBuyers: Count('Distinct fans who completed a purchase in the range') },
  { $id: 'DashboardTotals', additionalProperties: false },
);

export const DashboardDay = Type.Object(
  {
    date: Text(10, { description: 'The local date in `timeZone`' }),
    startsAt: Timestamp,
    hours: Type.Integer({
      format: 'int32',
      minimum: 0,
      maximum: 48,
      description: 'Hours in the local day: 23 or 25 on daylight-saving days (0 for a day a zone skipped)',
    }),
    ...figures,
  },
  { $id: 'DashboardDay', additionalProperties: false },
);

export const FitTest = Type.Object(
  {
    draws: Count('Draws tested'),
    categories: Count('Categories the published odds give a chance'),
    statistic: Nullable(
      Type.Number({ description: "Pearson's chi-square; null when a copy fell where the odds give no chance" }),
    ),
    degreesOfFreedom: Count('categories - 1'),
    pValue: Type.Number({
      minimum: 0,
      maximum: 1,
      description: 'Chance that fair draws stray at least this far from the odds; below 0.01 is a warning sign',
    }),
    minExpected: Type.Number({ description: 'Smallest expected count: below 5 the p-value is only approximate' }),
  },
  { $id: 'FitTest', additionalProperties: false },
);

const DrawFrequency = Type.Object(
  {
    collectibleId: Id,
    name: Nullable(Text(120)),
    rarity: Nullable(Type.Ref(Rarity)),
    observed: Count('Copies drawn since the pack was published'),
    observedShare: Type.Number({ minimum: 0, maximum: 1 }),
    expectedShare: Nullable(
      Type.Number({
        minimum: 0,
        maximum: 1,
        description: "A draw's chance under the pool as published (weight x copies); null once it left the pool",
      }),
    ),
  },
  { additionalProperties: false },
);

const RarityFrequency = Type.Object(
  {
    rarity: Type.Ref(Rarity),
    observed: Count('Copies of this rarity drawn since the pack was published'),
    expectedShare: Type.Number({ minimum: 0, maximum: 1 }),
  },
  { additionalProperties: false },
);

export const DashboardPack = Type.Object(
  {
    packId: Id,
    name: Text(120),
    status: Type.Ref(PackStatus),
    available: Count('Packs that can be sold now'),
    sold: Count('Packs sold in the range'),
    opened: Count('Packs opened in the range'),
    coinsTaken: Count('Coins paid for it in the range'),
    soldAllTime: Count('Purchases completed, ever'),
    draws: Type.Array(DrawFrequency, { maxItems: 1000 }),
    rarities: Type.Array(RarityFrequency, { maxItems: 5 }),
    fairness: Type.Object(
      { byCollectible: Nullable(Type.Ref(FitTest)), byRarity: Nullable(Type.Ref(FitTest)) },
      {
        additionalProperties: false,
        description: 'Chi-square goodness of fit of every draw since publication; null with no draws to test',
      },
    ),
  },
  { $id: 'DashboardPack', additionalProperties: false },
);

const rangeFields = {
  from: Text(10, { description: 'First local date included' }),
  to: Text(10, { description: 'First local date not included' }),
  timeZone: Text(64),
  asOf: Type.String({
    format: 'date-time',
    maxLength: 30,
    description: 'The rollups hold every event up to about this instant (now when the consumer has caught up)',
  }),
  totals: Type.Ref(DashboardTotals),
  series: Type.Array(Type.Ref(DashboardDay), { maxItems: 366 }),
};

export const TeamDashboard = Type.Object(
  { teamId: Id, ...rangeFields, packs: Type.Array(Type.Ref(DashboardPack), { maxItems: 10_000 }) },
  { $id: 'TeamDashboard', additionalProperties: false },
);
export type TeamDashboard = Static<typeof TeamDashboard>;

export const CurrencyMoney = Type.Object(
  {
    currency: Text(3, { description: 'ISO 4217, lowercase' }),
    orders: Count('Orders paid (fulfilled) in the range'),
    gross: Count('What those orders took, in minor units: refunds are not subtracted here, nor counted as revenue'),
    refunded: Count('Of that, refunded since'),
    disputes: Count('Of those orders, disputed now (open or lost)'),
    disputed: Count('Minor units under those disputes (less what was refunded)'),
    net: Type.Integer({
      format: 'int64',
      minimum: -Number.MAX_SAFE_INTEGER,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'gross - refunded - disputed',
    }),
    coins: Count('Coins those orders credited'),
    uncollectedCoins: Count('Coins refunds and disputes could not take back (the wallet had spent them)'),
  },
  { $id: 'CurrencyMoney', additionalProperties: false },
);

export const PlatformDashboard = Type.Object(
  { ...rangeFields, money: Type.Array(Type.Ref(CurrencyMoney), { maxItems: 200 }) },
  { $id: 'PlatformDashboard', additionalProperties: false },
);
export type PlatformDashboard = Static<typeof PlatformDashboard>;

export const TeamDashboardResponse = Envelope(Type.Ref(TeamDashboard));
export const PlatformDashboardResponse = Envelope(Type.Ref(PlatformDashboard));

export const DASHBOARD_SCHEMAS = [
  DashboardTotals,
  DashboardDay,
  FitTest,
  DashboardPack,
  TeamDashboard,
  CurrencyMoney,
  PlatformDashboard,
];

import t from 'tap';
import { MAX_RANGE_DAYS, resolveRange } from '../../../../plugins/app/dashboard/range.js';
import { hourOf, rollupOf } from '../../../../plugins/app/dashboard/rules.js';
import type { DomainEvent } from '../../../../schemas/events.js';

/** The days a dashboard counts, and what each event adds to the rollups: pure. */

const NOW = new Date('2026-06-15T12:00:00.000Z');
const hoursOf = (range: ReturnType<typeof resolveRange>) =>
  range.days.map((_, i) => ((range.bounds[i + 1] as Date).getTime() - (range.bounds[i] as Date).getTime()) / 3_600_000);

t.test('daylight-saving days in Europe/Paris have 23 and 25 hours', async (t) => {
  const spring = resolveRange({ from: '2026-03-28', to: '2026-03-31', timeZone: 'Europe/Paris' }, NOW);
  t.same(spring.days, ['2026-03-28', '2026-03-29', '2026-03-30']);
  t.same(hoursOf(spring), [24, 23, 24]);
  t.same(
    spring.bounds.map((bound) => bound.toISOString()),
    ['2026-03-27T23:00:00.000Z', '2026-03-28T23:00:00.000Z', '2026-03-29T22:00:00.000Z', '2026-03-30T22:00:00.000Z'],
  );
  const autumn = resolveRange({ from: '2026-10-25', to: '2026-10-26', timeZone: 'europe/paris' }, NOW);
  t.equal(autumn.timeZone, 'Europe/Paris', 'the zone as the tz database spells it');
  t.same(hoursOf(autumn), [25]);
  t.same(
    autumn.bounds.map((bound) => bound.toISOString()),
    ['2026-10-24T22:00:00.000Z', '2026-10-25T23:00:00.000Z'],
  );
});

t.test('defaults: UTC, the 30 days up to and including today', async (t) => {
  const range = resolveRange({}, NOW);
  t.match(range, { from: '2026-05-17', to: '2026-06-16', timeZone: 'UTC' });
  t.equal(range.days.length, 30);
  t.equal(range.days.at(-1), '2026-06-15', 'today is the last day');
  // At 12:00 UTC it is already 02:00 on the 16th in Kiritimati (UTC+14): its today is the 16th.
  t.equal(resolveRange({ timeZone: 'Pacific/Kiritimati' }, NOW).days.at(-1), '2026-06-16');
  t.equal(resolveRange({ from: '2026-06-01' }, NOW).days.length, 15, '`from` alone runs to today');
});

t.test('bad ranges and zones are refused with their codes', async (t) => {
  const refused = (query: Parameters<typeof resolveRange>[0], code: string, path: string) =>
    t.throws(() => resolveRange(query, NOW), { code, statusCode: 400, details: [{ path }] }, JSON.stringify(query));
  refused({ timeZone: 'Mars/Olympus_Mons' }, 'invalid_time_zone', '/timeZone');
  refused({ timeZone: '+01:00' }, 'invalid_time_zone', '/timeZone');
  refused({ from: '2026-02-30', to: '2026-03-02' }, 'invalid_range', '/from');
  refused({ from: '2026-02-01', to: '2026-13-01' }, 'invalid_range', '/to');
  refused({ from: '2026-03-02', to: '2026-03-02' }, 'invalid_range', '/from');
  refused({ from: '2026-03-03', to: '2026-03-02' }, 'invalid_range', '/from');
  refused({ from: '2025-01-01', to: '2026-01-03' }, 'invalid_range', '/to');
  t.equal(
    resolveRange({ from: '2024-01-01', to: '2025-01-01' }, NOW).days.length,
    MAX_RANGE_DAYS,
    'a leap year is allowed',
  );
});

const event = (type: string, at: string, data: object, extra: Partial<DomainEvent> = {}) =>
  ({
    id: '1',
    type,
    occurredAt: new Date(at),
    userId: 'fan',
    teamId: 'team',
    subject: 's',
    data,
    ...extra,
  }) as DomainEvent;

t.test('what events add to the rollups', async (t) => {
  t.equal(hourOf(new Date('2026-03-29T01:59:59.999Z')), '2026-03-29T01:00:00.000Z');
  const rollup = rollupOf([
    event('purchase.completed', '2026-03-29T01:10:00Z', { purchaseId: 'p1', packId: 'k', price: 10 }),
    event('purchase.completed', '2026-03-29T01:50:00Z', { purchaseId: 'p2', packId: 'k', price: 10 }),
    event(
      'purchase.completed',
      '2026-03-29T02:05:00Z',
      { purchaseId: 'p3', packId: 'k', price: 0 },
      { userId: 'other' },
    ),
    event('pack.opened', '2026-03-29T01:20:00Z', {
      userPackId: 'u',
      packId: 'k',
      pulls: [
        { pullId: 'a', collectibleId: 'c1', rarity: 'rare', points: 1, serialNumber: 1 },
        { pullId: 'b', collectibleId: 'c1', rarity: 'rare', points: 1, serialNumber: 2 },
        { pullId: 'c', collectibleId: 'c2', rarity: 'common', points: 1, serialNumber: 1 },
      ],
    }),
    event('quest.completed', '2026-03-29T01:00:00Z', { questId: 'q', period: 'once' }),
    event('round.finalized', '2026-03-29T01:00:00Z', {
      leagueId: 'l',
      roundId: 'r',
      season: 's',
      standingsHash: 'h',
      entrants: 7,
    }),
    event(
      'reward.granted',
      '2026-03-29T01:00:00Z',
      { grantId: 'g', rewardId: 'w', sourceKey: 'k', coins: 1, packs: [], collectibles: [] },
      { teamId: null },
    ),
    event('wallet.credited', '2026-03-29T01:00:00Z', {
      entryId: 'e',
      amount: 1,
      balanceAfter: 1,
      kind: 'topup',
      reference: null,
    }),
  ]);
  t.match(rollup.hours, [
    {
      teamId: 'team',
      hour: '2026-03-29T01:00:00.000Z',
      packId: 'k',
      packsSold: 2,
      coinsTaken: 20,
      packsOpened: 1,
      pullsRare: 2,
      pullsCommon: 1,
    },
    { teamId: 'team', hour: '2026-03-29T02:00:00.000Z', packId: 'k', packsSold: 1, coinsTaken: 0 },
    { teamId: 'team', hour: '2026-03-29T01:00:00.000Z', packId: '', questCompletions: 1, leagueEntries: 7, grants: 0 },
    { teamId: '', packId: '', grants: 1 },
  ]);
  t.match(
    rollup.hours.slice(4),
    [
      {
        teamId: 'team',
        hour: '2026-03-29T01:00:00.000Z',
        packId: '*',
        packsSold: 2,
        pullsRare: 2,
        questCompletions: 1,
        leagueEntries: 7,
      },
      { teamId: 'team', hour: '2026-03-29T02:00:00.000Z', packId: '*', packsSold: 1 },
      { teamId: '', packId: '*', grants: 1 },
    ],
    "each (team, hour)'s total row",
  );
  t.equal(rollup.hours.length, 7, 'a wallet event adds nothing');
  t.same(rollup.buyers.length, 2, 'a buyer counts once per hour');
  t.same(
    rollup.draws.map((row) => [row.collectibleId, row.draws]),
    [
      ['c1', 2],
      ['c2', 1],
    ],
  );
});

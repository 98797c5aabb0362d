import t from 'tap';
import {
  advance,
  allowedFrom,
  assertEditable,
  assertValidQuest,
  contribution,
  EDITABLE_FIELDS,
  initialProgress,
  isWithinQuest,
  nextStatus,
  type ProgressState,
  progressOf,
  QUEST_TRANSITIONS,
  readProgress,
  scopedCriteria,
  validateQuest,
} from '../../../../plugins/app/quests/rules.js';
import {
  QUEST_ACTIONS,
  QUEST_STATUSES,
  type QuestAction,
  type QuestStatus,
  type Rarity,
} from '../../../../schemas/enums.js';
import type { DomainEvent } from '../../../../schemas/events.js';
import type { CollectCriteria, CountCriteria, QuestCriteria, StreakCriteria } from '../../../../schemas/quests.js';

let sequence = 0;
const pull = (collectibleId: string, rarity: Rarity = 'common') => ({
  pullId: `pull-${++sequence}`,
  collectibleId,
  rarity,
  points: 10,
  serialNumber: sequence,
});

const opened = (
  pulls: ReturnType<typeof pull>[],
  options: { packId?: string; teamId?: string | null; userId?: string | null; at?: string } = {},
): DomainEvent => ({
  id: `event-${++sequence}`,
  type: 'pack.opened',
  userId: options.userId === undefined ? 'fan-1' : options.userId,
  teamId: options.teamId ?? null,
  subject: `user-pack-${sequence}`,
  occurredAt: new Date(options.at ?? '2026-11-26T12:00:00Z'),
  data: { userPackId: `user-pack-${sequence}`, packId: options.packId ?? 'pack-1', pulls },
});

const purchased = (options: { packId?: string; teamId?: string | null; userId?: string | null } = {}): DomainEvent => ({
  id: `event-${++sequence}`,
  type: 'purchase.completed',
  userId: options.userId === undefined ? 'fan-1' : options.userId,
  teamId: options.teamId ?? null,
  subject: `purchase-${sequence}`,
  occurredAt: new Date('2026-11-26T12:00:00Z'),
  data: { purchaseId: `purchase-${sequence}`, packId: options.packId ?? 'pack-1', price: 100 },
});

const credited: DomainEvent = {
  id: 'event-credit',
  type: 'wallet.credited',
  userId: 'fan-1',
  subject: 'entry-1',
  occurredAt: new Date('2026-11-26T12:00:00Z'),
  data: { entryId: 'entry-1', amount: 10, balanceAfter: 10, kind: 'reward', reference: null },
};

const count = (criteria: Partial<CountCriteria> = {}): CountCriteria => ({
  kind: 'count',
  event: 'pack.opened',
  count: 3,
  ...criteria,
});

t.test('count pack.opened: one per open, filtered on the pack and its team', async (t) => {
  t.equal(contribution(count(), opened([pull('c1'), pull('c2')])), 1, 'an open is one, whatever it holds');
  t.equal(contribution(count(), opened([])), 1);
  t.equal(contribution(count({ filter: { packId: 'pack-1' } }), opened([])), 1);
  t.equal(contribution(count({ filter: { packId: 'pack-2' } }), opened([])), 0);
  t.equal(contribution(count({ filter: { teamId: 'team-1' } }), opened([], { teamId: 'team-1' })), 1);
  t.equal(contribution(count({ filter: { teamId: 'team-1' } }), opened([], { teamId: 'team-2' })), 0);
  t.equal(contribution(count({ filter: { teamId: 'team-1' } }), opened([])), 0, 'a platform pack is no team pack');
  t.equal(contribution(count(), purchased()), 0, 'another event type');
  t.equal(contribution(count(), credited), 0);
  t.equal(contribution(count(), opened([], { userId: null })), 0, 'an event of no fan advances nobody');
});

t.test('count collectible.pulled: each matching pull of an open', async (t) => {
  const pulls = [pull('c1', 'common'), pull('c2', 'rare'), pull('c1', 'legendary'), pull('c3', 'epic')];
  const pulled = (filter?: CountCriteria['filter']) => count({ event: 'collectible.pulled', filter });
  t.equal(contribution(pulled(), opened(pulls)), 4);
  t.equal(contribution(pulled({ collectibleId: 'c1' }), opened(pulls)), 2, 'two copies of c1');
  t.equal(contribution(pulled({ minRarity: 'rare' }), opened(pulls)), 3, 'rare, legendary, epic');
  t.equal(contribution(pulled({ minRarity: 'legendary' }), opened(pulls)), 1);
  t.equal(contribution(pulled({ minRarity: 'common' }), opened(pulls)), 4);
  t.equal(contribution(pulled({ collectibleId: 'c1', minRarity: 'epic' }), opened(pulls)), 1);
  t.equal(contribution(pulled({ packId: 'pack-2' }), opened(pulls)), 0, 'the open is of another pack');
  t.equal(contribution(pulled({ teamId: 'team-1' }), opened(pulls, { teamId: 'team-1' })), 4);
  t.equal(contribution(pulled(), opened([])), 0, 'an empty open pulls nothing');
  t.equal(contribution(pulled(), purchased()), 0, 'a purchase pulls nothing');
  t.equal(
    contribution(pulled({ minRarity: 'mythic' as Rarity }), opened(pulls)),
    0,
    'an unknown rarity matches nothing',
  );
  t.equal(
    contribution(pulled({ minRarity: 'rare' }), opened([{ ...pull('c9'), rarity: 'bogus' as Rarity }])),
    0,
    'a pull of unknown rarity is no rare',
  );
});

t.test('count purchase.completed: one per purchase, filtered on the pack and its team', async (t) => {
  const bought = count({ event: 'purchase.completed' });
  t.equal(contribution(bought, purchased()), 1);
  t.equal(contribution({ ...bought, filter: { packId: 'pack-1' } }, purchased()), 1);
  t.equal(contribution({ ...bought, filter: { packId: 'pack-2' } }, purchased()), 0);
  t.equal(contribution({ ...bought, filter: { teamId: 'team-1' } }, purchased({ teamId: 'team-1' })), 1);
  t.equal(contribution({ ...bought, filter: { teamId: 'team-1' } }, purchased({ teamId: 'team-9' })), 0);
  t.equal(contribution(bought, opened([pull('c1')])), 0, 'an open is no purchase');
  t.equal(
    contribution({ ...bought, filter: { minRarity: 'rare' } }, purchased()),
    0,
    'pull filters never match a purchase',
  );
});

t.test('pull filters on pack.opened (refused by validateQuest) need a matching pull', async (t) => {
  const criteria = count({ filter: { minRarity: 'epic' } });
  t.equal(contribution(criteria, opened([pull('c1', 'common')])), 0);
  t.equal(contribution(criteria, opened([pull('c1', 'epic'), pull('c2', 'legendary')])), 1, 'still one open');
});

t.test('hostile event data counts nothing rather than throwing', async (t) => {
  const broken = {
    ...opened([]),
    data: { userPackId: 'u', packId: 'pack-1', pulls: 'nope' },
  } as unknown as DomainEvent;
  t.equal(contribution(count({ event: 'collectible.pulled' }), broken), 0);
  t.same(contribution({ kind: 'collect', collectibleIds: ['c1'] }, broken), []);
  const noData = { ...opened([]), data: undefined } as unknown as DomainEvent;
  t.equal(contribution(count({ filter: { packId: 'pack-1' } }), noData), 0);
  t.throws(() => contribution({ kind: 'bogus' } as unknown as QuestCriteria, opened([])), TypeError);
});

const collect: CollectCriteria = { kind: 'collect', collectibleIds: ['c1', 'c2', 'c3'] };

t.test('collect: the set members an open pulled, each once, in the set order', async (t) => {
  t.same(contribution(collect, opened([pull('c3'), pull('x'), pull('c1'), pull('c3')])), ['c1', 'c3']);
  t.same(contribution(collect, opened([pull('x')])), []);
  t.same(contribution(collect, purchased()), []);
  t.same(contribution(collect, opened([pull('c1')], { userId: null })), []);
});

const streak = (criteria: Partial<StreakCriteria> = {}): StreakCriteria => ({
  kind: 'streak',
  event: 'pack.opened',
  length: 3,
  unit: 'day',
  ...criteria,
});

t.test('streak: whether the event matches', async (t) => {
  t.equal(contribution(streak(), opened([])), true);
  t.equal(contribution(streak({ filter: { packId: 'pack-2' } }), opened([])), false);
  t.equal(
    contribution(streak({ event: 'collectible.pulled', filter: { minRarity: 'epic' } }), opened([pull('c1')])),
    false,
  );
  t.equal(contribution(streak({ event: 'purchase.completed' }), purchased()), true);
});

t.test('scopedCriteria: a team quest counts its own packs only', async (t) => {
  const scoped = scopedCriteria(count(), 'team-1');
  t.same(scoped, { ...count(), filter: { teamId: 'team-1' } });
  t.equal(contribution(scoped, opened([], { teamId: 'team-2' })), 0);
  t.same(scopedCriteria(count({ filter: { packId: 'p' } }), 'team-1').filter, { packId: 'p', teamId: 'team-1' });
  t.same(scopedCriteria(count(), null), count(), 'a platform quest counts everything');
  t.same(scopedCriteria(collect, 'team-1'), collect, 'a set is already explicit');
});

t.test('isWithinQuest: from startsAt, included, to endsAt, excluded', async (t) => {
  const quest = { startsAt: new Date('2026-12-01T00:00:00Z'), endsAt: new Date('2026-12-08T00:00:00Z') };
  t.ok(isWithinQuest(quest, new Date('2026-12-01T00:00:00Z')));
  t.ok(isWithinQuest(quest, new Date('2026-12-07T23:59:59.999Z')));
  t.notOk(isWithinQuest(quest, new Date('2026-11-30T23:59:59.999Z')));
  t.notOk(isWithinQuest(quest, new Date('2026-12-08T00:00:00Z')));
  t.ok(isWithinQuest({ ...quest, endsAt: null }, new Date('2099-01-01T00:00:00Z')), 'no end');
  t.notOk(isWithinQuest(quest, new Date(Number.NaN)), 'an invalid date is in no window');
});

t.test('count progress', async (t) => {
  const criteria = count({ count: 3, event: 'collectible.pulled' });
  let state = initialProgress(criteria);
  t.same(state, { kind: 'count', count: 0 });
  t.same(progressOf(criteria, state), { progress: 0, target: 3, completed: false });
  const unchanged = advance(criteria, state, purchased(), 'UTC');
  t.equal(unchanged, state, 'an event that adds nothing returns the same state');
  state = advance(criteria, state, opened([pull('c1'), pull('c2')]), 'UTC');
  t.same(progressOf(criteria, state), { progress: 2, target: 3, completed: false });
  state = advance(criteria, state, opened([pull('c1'), pull('c2')]), 'UTC');
  t.same(state, { kind: 'count', count: 4 });
  t.same(progressOf(criteria, state), { progress: 3, target: 3, completed: true }, 'progress is capped at the target');
  t.same(JSON.parse(JSON.stringify(state)), state, 'JSON round trip');
});

t.test('collect progress', async (t) => {
  let state = initialProgress(collect);
  t.same(state, { kind: 'collect', collected: [] });
  state = advance(collect, state, opened([pull('c3'), pull('c3')]), 'UTC');
  t.same(state, { kind: 'collect', collected: ['c3'] });
  const again = advance(collect, state, opened([pull('c3'), pull('x')]), 'UTC');
  t.equal(again, state, 'a duplicate adds nothing');
  state = advance(collect, state, opened([pull('c1')]), 'UTC');
  t.same(state.collected, ['c1', 'c3'], 'in the set order');
  t.same(progressOf(collect, state), { progress: 2, target: 3, completed: false });
  state = advance(collect, state, opened([pull('c2')]), 'UTC');
  t.same(progressOf(collect, state), { progress: 3, target: 3, completed: true });
  t.same(
    progressOf(collect, { kind: 'collect', collected: ['c1', 'zz', 'c1'] }),
    { progress: 1, target: 3, completed: false },
    'strangers and repeats in a stored state do not count',
  );
});

t.test('streak progress: same day unchanged, next day +1, a gap restarts, a late event changes nothing', async (t) => {
  const criteria = streak({ length: 3 });
  const zone = 'America/Los_Angeles';
  const on = (iso: string) => opened([], { at: iso });
  let state = initialProgress(criteria);
  t.same(state, { kind: 'streak', current: 0, best: 0, lastUnit: null });
  t.same(progressOf(criteria, state), { progress: 0, target: 3, completed: false });

  state = advance(criteria, state, on('2026-03-07T20:00:00Z'), zone); // Saturday
  t.same({ current: state.current, best: state.best }, { current: 1, best: 1 });
  const saturday = state.lastUnit as number;
  t.equal(advance(criteria, state, on('2026-03-08T07:59:00Z'), zone), state, 'Saturday 23:59 local: same day');
  state = advance(criteria, state, on('2026-03-08T08:00:00Z'), zone); // Sunday 00:00 PST, the 23-hour day
  t.same(state, { kind: 'streak', current: 2, best: 2, lastUnit: saturday + 1 });
  t.equal(advance(criteria, state, on('2026-03-07T21:00:00Z'), zone), state, 'a late Saturday event: unchanged');
  t.equal(advance(criteria, state, on('2026-03-01T21:00:00Z'), zone), state, 'a much older event: unchanged');
  t.same(progressOf(criteria, state), { progress: 2, target: 3, completed: false });
  t.same(
    progressOf(criteria, state, { now: new Date('2026-03-09T20:00:00Z'), timeZone: zone }),
    { progress: 2, target: 3, completed: false },
    'alive on Monday: it may still go on',
  );
  t.same(
    progressOf(criteria, state, { now: new Date('2026-03-10T20:00:00Z'), timeZone: zone }),
    { progress: 0, target: 3, completed: false },
    'broken on Tuesday',
  );

  const gap = advance(criteria, state, on('2026-03-10T20:00:00Z'), zone); // Tuesday: Monday missed
  t.same(gap, { kind: 'streak', current: 1, best: 2, lastUnit: saturday + 3 });

  state = advance(criteria, state, on('2026-03-09T20:00:00Z'), zone); // Monday
  t.same(state, { kind: 'streak', current: 3, best: 3, lastUnit: saturday + 2 });
  t.same(progressOf(criteria, state), { progress: 3, target: 3, completed: true });
  const broken = advance(criteria, state, on('2026-03-20T20:00:00Z'), zone);
  t.same(broken, { kind: 'streak', current: 1, best: 3, lastUnit: saturday + 13 });
  t.same(
    progressOf(criteria, broken),
    { progress: 3, target: 3, completed: true },
    'a completed streak stays completed',
  );
  t.equal(advance(criteria, state, purchased(), zone), state, 'a non-matching event changes nothing');
});

t.test("streak units are the quest's zone's days, not UTC's", async (t) => {
  const criteria = streak({ length: 2 });
  // 23:30 and 00:30 UTC are the same day in Los Angeles: no streak there; two days in UTC.
  const first = opened([], { at: '2026-06-15T23:30:00Z' });
  const second = opened([], { at: '2026-06-16T00:30:00Z' });
  const inLosAngeles = advance(
    criteria,
    advance(criteria, initialProgress(criteria), first, 'America/Los_Angeles'),
    second,
    'America/Los_Angeles',
  );
  t.equal(inLosAngeles.current, 1);
  const inUtc = advance(criteria, advance(criteria, initialProgress(criteria), first, 'UTC'), second, 'UTC');
  t.equal(inUtc.current, 2);
});

t.test('weekly streaks count ISO weeks, across the year boundary', async (t) => {
  const criteria = streak({ unit: 'week', length: 2 });
  let state = advance(criteria, initialProgress(criteria), opened([], { at: '2026-12-28T10:00:00Z' }), 'UTC');
  t.equal(advance(criteria, state, opened([], { at: '2027-01-03T10:00:00Z' }), 'UTC'), state, 'same week (W53)');
  state = advance(criteria, state, opened([], { at: '2027-01-04T10:00:00Z' }), 'UTC');
  t.same(progressOf(criteria, state), { progress: 2, target: 2, completed: true });
});

t.test('states must fit their criteria', async (t) => {
  const criteria = count();
  t.throws(() => advance(criteria, initialProgress(collect) as unknown as ProgressState, opened([]), 'UTC'), TypeError);
  t.throws(() => progressOf(collect, { kind: 'count', count: 1 }), TypeError);
  t.throws(() => progressOf(collect, null as unknown as ProgressState), TypeError);
  t.throws(() => initialProgress({ kind: 'nope' } as unknown as QuestCriteria), TypeError);
  t.throws(
    () => advance(streak(), initialProgress(streak()), opened([]), 'Not/AZone'),
    RangeError,
    'a streak needs a real zone',
  );
});

t.test('readProgress reads back a stored state, or refuses it', async (t) => {
  t.same(readProgress(count(), null), { kind: 'count', count: 0 }, 'no row yet: the initial state');
  t.same(readProgress(count(), undefined), { kind: 'count', count: 0 });
  t.same(readProgress(count(), { kind: 'count', count: 5 }), { kind: 'count', count: 5 });
  t.same(readProgress(collect, { kind: 'collect', collected: ['c1'] }), { kind: 'collect', collected: ['c1'] });
  const stored = { kind: 'streak', current: 2, best: 4, lastUnit: 20_000 };
  t.same(readProgress(streak(), stored), stored);
  for (const [criteria, value] of [
    [count(), { kind: 'count', count: -1 }],
    [count(), { kind: 'count', count: 1.5 }],
    [count(), { kind: 'count', count: '3' }],
    [count(), { kind: 'collect', collected: [] }],
    [count(), 'count'],
    [count(), []],
    [collect, { kind: 'collect', collected: 'c1' }],
    [collect, { kind: 'collect', collected: [1] }],
    [streak(), { kind: 'streak', current: 3, best: 2, lastUnit: 1 }],
    [streak(), { kind: 'streak', current: 0, best: 0, lastUnit: 1.5 }],
    [streak(), { kind: 'streak', current: 1, best: 1, lastUnit: null }],
    [streak(), { kind: 'streak', current: 0, best: 0 }],
  ] as const) {
    t.throws(() => readProgress(criteria as QuestCriteria, value), TypeError, JSON.stringify(value));
  }
});

t.test('the lifecycle, cell by cell', async (t) => {
  const expected: Record<QuestAction, Record<QuestStatus, QuestStatus | undefined>> = {
    publish: { draft: 'active', active: undefined, ended: undefined },
    end: { draft: 'ended', active: 'ended', ended: undefined },
  };
  for (const action of QUEST_ACTIONS) {
    for (const status of QUEST_STATUSES) {
      const next = expected[action][status];
      if (next) t.equal(nextStatus(status, action), next, `${action} from ${status}`);
      else
        t.throws(
          () => nextStatus(status, action),
          { code: 'invalid_transition', statusCode: 409 },
          `${action} from ${status}`,
        );
    }
  }
  t.same(allowedFrom('publish'), ['draft']);
  t.same(allowedFrom('end'), ['draft', 'active']);
  t.same(Object.keys(QUEST_TRANSITIONS).sort(), [...QUEST_ACTIONS].sort());
  t.throws(() => nextStatus('draft', 'archive' as QuestAction), { code: 'invalid_transition' });
  t.throws(() => nextStatus('draft', '__proto__' as QuestAction), { code: 'invalid_transition' });
  t.throws(() => nextStatus('bogus' as QuestStatus, 'publish'), { code: 'invalid_transition' });
});

t.test('assertEditable: everything in draft, name/description/endsAt once active, nothing once ended', async (t) => {
  const all = [
    'name',
    'description',
    'criteria',
    'period',
    'timeZone',
    'startsAt',
    'endsAt',
    'rewardId',
    'maxCompletions',
  ];
  t.doesNotThrow(() => assertEditable('draft', all));
  t.doesNotThrow(() => assertEditable('active', ['name', 'description', 'endsAt']));
  t.doesNotThrow(() => assertEditable('active', []));
  for (const field of ['criteria', 'period', 'timeZone', 'rewardId', 'maxCompletions', 'startsAt']) {
    t.throws(() => assertEditable('active', ['name', field]), {
      code: 'quest_immutable',
      statusCode: 409,
      details: [{ path: `/${field}`, message: 'cannot change on an active quest' }],
    });
  }
  t.throws(() => assertEditable('ended', ['name']), { code: 'quest_immutable', details: [{ path: '/name' }] });
  t.throws(() => assertEditable('active', ['__proto__', 'constructor']), { code: 'quest_immutable' });
  t.throws(() => assertEditable('bogus' as QuestStatus, ['name']), TypeError);
  t.same(EDITABLE_FIELDS.active, ['name', 'description', 'endsAt']);
});

const now = new Date('2026-11-26T12:00:00Z');
const valid = { criteria: count(), period: 'once', timeZone: 'Europe/Paris', startsAt: '2026-12-01T00:00:00Z' };
const paths = (input: Parameters<typeof validateQuest>[0]) => validateQuest(input, now).map((problem) => problem.path);

t.test('validateQuest accepts good quests', async (t) => {
  t.same(validateQuest(valid, now), []);
  t.same(validateQuest({ criteria: count() }, now), [], 'period once and UTC by default');
  t.same(validateQuest({ ...valid, criteria: collect, endsAt: '2026-12-02T00:00:00Z' }, now), []);
  t.same(validateQuest({ ...valid, criteria: streak({ length: 7 }), period: 'weekly' }, now), []);
  t.same(validateQuest({ ...valid, criteria: streak({ length: 30, unit: 'day' }) }, now), [], 'no end: any length');
  t.same(validateQuest({ ...valid, teamId: 't1', criteria: count({ filter: { teamId: 't1' } }) }, now), []);
  t.same(
    validateQuest(
      {
        ...valid,
        criteria: count({ event: 'collectible.pulled', filter: { minRarity: 'epic', collectibleId: 'c1' } }),
      },
      now,
    ),
    [],
  );
  t.doesNotThrow(() => assertValidQuest(valid, now));
});

t.test('validateQuest: time zone and dates', async (t) => {
  t.same(paths({ ...valid, timeZone: 'Mars/Olympus' }), ['/timeZone']);
  t.same(paths({ ...valid, timeZone: '' }), ['/timeZone']);
  t.same(paths({ ...valid, timeZone: '+02:00' }), ['/timeZone']);
  t.same(paths({ ...valid, timeZone: 7 }), ['/timeZone']);
  t.same(paths({ ...valid, period: 'monthly' }), ['/period']);
  t.same(paths({ ...valid, endsAt: '2026-12-01T00:00:00Z' }), ['/endsAt'], 'ending when it starts');
  t.same(paths({ ...valid, endsAt: '2026-11-30T00:00:00Z' }), ['/endsAt'], 'ending before it starts');
  t.same(paths({ ...valid, startsAt: 'yesterday' }), ['/startsAt']);
  t.same(paths({ ...valid, endsAt: 'x'.repeat(10_000) }), ['/endsAt']);
  t.same(paths({ criteria: count(), endsAt: '2026-11-25T00:00:00Z' }), ['/endsAt'], 'without startsAt, now');
  t.same(paths({ criteria: count(), endsAt: new Date('2026-11-27T00:00:00Z') }), [], 'Dates too');
});

t.test('validateQuest: streaks must be able to complete', async (t) => {
  t.same(paths({ ...valid, criteria: streak(), period: 'daily' }), ['/period'], 'a daily quest restarts each day');
  t.same(paths({ ...valid, criteria: streak({ unit: 'week', length: 2 }), period: 'weekly' }), ['/criteria/unit']);
  t.same(paths({ ...valid, criteria: streak({ length: 8 }), period: 'weekly' }), ['/criteria/length']);
  const week = { ...valid, startsAt: '2026-11-30T00:00:00+01:00', endsAt: '2026-12-07T00:00:00+01:00' };
  t.same(paths({ ...week, criteria: streak({ length: 7 }) }), [], 'seven Paris days');
  t.same(validateQuest({ ...week, criteria: streak({ length: 8 }) }, now), [
    { path: '/criteria/length', message: 'must be at most 7: the quest spans 7 days' },
  ]);
  t.same(paths({ ...week, criteria: streak({ unit: 'week', length: 2 }) }), ['/criteria/length'], 'one ISO week');
  t.same(paths({ ...valid, criteria: streak({ length: 1 }) }), ['/criteria/length']);
  t.same(paths({ ...valid, criteria: streak({ length: 366 }) }), ['/criteria/length']);
  t.same(paths({ ...valid, criteria: streak({ unit: 'month' as never }) }), ['/criteria/unit']);
});

t.test('validateQuest: criteria fields and filters', async (t) => {
  t.same(paths({ ...valid, criteria: count({ count: 0 }) }), ['/criteria/count']);
  t.same(paths({ ...valid, criteria: count({ count: 100_001 }) }), ['/criteria/count']);
  t.same(paths({ ...valid, criteria: count({ count: 2.5 }) }), ['/criteria/count']);
  t.same(paths({ ...valid, criteria: count({ event: 'wallet.credited' as never }) }), ['/criteria/event']);
  t.same(
    paths({ ...valid, criteria: count({ filter: { minRarity: 'epic' } }) }),
    ['/criteria/filter/minRarity'],
    'opens have no rarity',
  );
  t.same(paths({ ...valid, criteria: count({ event: 'purchase.completed', filter: { collectibleId: 'c1' } }) }), [
    '/criteria/filter/collectibleId',
  ]);
  t.same(
    paths({ ...valid, criteria: count({ event: 'collectible.pulled', filter: { minRarity: 'mythic' as Rarity } }) }),
    ['/criteria/filter/minRarity'],
  );
  t.same(paths({ ...valid, criteria: { ...count(), filter: 'all' } as never }), ['/criteria/filter']);
  t.same(paths({ ...valid, teamId: 't1', criteria: count({ filter: { teamId: 't2' } }) }), ['/criteria/filter/teamId']);
  t.same(
    paths({ ...valid, teamId: null, criteria: count({ filter: { teamId: 't2' } }) }),
    [],
    'a platform quest may name a team',
  );
});

t.test('validateQuest: collect sets', async (t) => {
  t.same(validateQuest({ ...valid, criteria: { kind: 'collect', collectibleIds: ['a', 'b', 'a'] } }, now), [
    { path: '/criteria/collectibleIds/2', message: 'repeats a' },
  ]);
  t.same(paths({ ...valid, criteria: { kind: 'collect', collectibleIds: [] } }), ['/criteria/collectibleIds']);
  t.same(paths({ ...valid, criteria: { kind: 'collect', collectibleIds: 'a' } }), ['/criteria/collectibleIds']);
  t.same(
    paths({ ...valid, criteria: { kind: 'collect', collectibleIds: Array.from({ length: 101 }, (_, i) => `c${i}`) } }),
    ['/criteria/collectibleIds'],
  );
  t.same(paths({ ...valid, criteria: { kind: 'collect', collectibleIds: ['a', 3, ''] } }), [
    '/criteria/collectibleIds/1',
    '/criteria/collectibleIds/2',
  ]);
});

t.test('validateQuest: hostile shapes are listed, never thrown', async (t) => {
  t.same(paths({ ...valid, criteria: undefined }), ['/criteria']);
  t.same(paths({ ...valid, criteria: [] }), ['/criteria']);
  t.same(paths({ ...valid, criteria: { kind: '__proto__' } }), ['/criteria/kind']);
  t.same(paths(null as never), ['/']);
  t.same(paths('quest' as never), ['/']);
  t.same(paths({ timeZone: 'Nowhere', period: 'hourly', startsAt: 'a', endsAt: 'b', criteria: { kind: 'count' } }), [
    '/timeZone',
    '/period',
    '/startsAt',
    '/endsAt',
    '/criteria/count',
    '/criteria/event',
  ]);
  t.throws(() => assertValidQuest({ ...valid, timeZone: 'Nowhere' }, now), {
    statusCode: 400,
    code: 'validation_failed',
    details: [{ path: '/timeZone' }],
  });
});

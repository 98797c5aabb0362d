import t from 'tap';
import type { Test } from '../../../support/jwt.js';
import { ValidationError } from '../../../../plugins/app/errors.js';
import {
  collectorBoardsAt,
  collectorsBoardOf,
  leagueBoardOf,
  weekByKey,
  weekOf,
} from '../../../../plugins/app/leaderboards/windows.js';

/**
 * Windows of leaderboards: ISO weeks in the board's time zone (a league's own, UTC for the
 * collector board), so a week spanning a daylight-saving change is still one week.
 */

const HOUR = 3_600_000;

/** The call is refused as a client's mistake (400 in the error envelope). */
function refused(t: Test, call: () => unknown) {
  try {
    call();
    t.fail('expected a 400');
  } catch (error) {
    t.ok(error instanceof ValidationError, (error as Error).message);
  }
}
const paris = { id: 'league-1', timeZone: 'Europe/Paris', season: '2026' };

t.test(
  'a week that spans the spring change in the league’s zone has 167 hours and holds its Sunday night',
  async (t) => {
    // Europe/Paris moved from +01:00 to +02:00 on Sunday 2026-03-29.
    const week = weekByKey('2026-W13', 'Europe/Paris');
    t.ok(week);
    t.equal(week?.startsAt.toISOString(), '2026-03-22T23:00:00.000Z', 'Monday 00:00 in Paris, winter time');
    t.equal(week?.endsAt?.toISOString(), '2026-03-29T22:00:00.000Z', 'the next Monday 00:00, summer time');
    t.equal(((week?.endsAt?.getTime() ?? 0) - (week?.startsAt.getTime() ?? 0)) / HOUR, 167);
    // A round locking on Sunday 23:30 in Paris counts in that week; at Monday 00:30 in the next.
    t.equal(weekOf(new Date('2026-03-29T21:30:00Z'), 'Europe/Paris').key, '2026-W13');
    t.equal(weekOf(new Date('2026-03-29T22:30:00Z'), 'Europe/Paris').key, '2026-W14');
    // The same instants in UTC fall in the same week: a board in the wrong zone would differ here.
    t.equal(weekOf(new Date('2026-03-29T22:30:00Z'), 'UTC').key, '2026-W13');
    const autumn = weekByKey('2026-W43', 'Europe/Paris');
    t.equal(
      ((autumn?.endsAt?.getTime() ?? 0) - (autumn?.startsAt.getTime() ?? 0)) / HOUR,
      169,
      'the autumn week has 169',
    );
  },
);

t.test('a league board is named by its window in its own zone', async (t) => {
  const now = new Date('2026-03-29T22:30:00Z');
  t.match(leagueBoardOf(paris, {}, now), { key: 'league:league-1:all-time', window: 'all-time' });
  t.match(leagueBoardOf(paris, { window: 'season' }, now), { key: 'league:league-1:season:2026', windowKey: '2026' });
  t.match(leagueBoardOf(paris, { window: 'season', season: '2025' }, now), { windowKey: '2025' });
  t.match(leagueBoardOf(paris, { window: 'week' }, now), {
    key: 'league:league-1:week:2026-W14',
    timeZone: 'Europe/Paris',
  });
  t.match(leagueBoardOf(paris, { window: 'week', week: '2026-W13' }, now), { windowKey: '2026-W13' });
  refused(t, () => leagueBoardOf(paris, { window: 'week', season: '2026' }, now));
  refused(t, () => leagueBoardOf(paris, { week: '2026-W13' }, now));
  refused(t, () => leagueBoardOf(paris, { window: 'week', week: '2026-W54' }, now));
});

t.test('the collector board: all-time and UTC weeks, no seasons', async (t) => {
  const at = new Date('2026-11-26T10:00:00Z');
  t.same(
    collectorBoardsAt(at).map((board) => board.key),
    ['collectors:all-time', 'collectors:week:2026-W48'],
  );
  t.match(collectorsBoardOf({ window: 'week' }, at), { key: 'collectors:week:2026-W48', timeZone: 'UTC' });
  refused(t, () => collectorsBoardOf({ window: 'season' }, at));
  refused(t, () => collectorsBoardOf({ season: 'x' }, at));
});

import t from 'tap';
import {
  canonicalTimeZone,
  isTimeZone,
  periodByKey,
  periodOf,
  unitIndex,
} from '../../../../plugins/app/quests/periods.js';

const at = (iso: string) => new Date(iso);
const HOUR = 3_600_000;
const hours = (period: { startsAt: Date; endsAt: Date | null }) =>
  period.endsAt ? (period.endsAt.getTime() - period.startsAt.getTime()) / HOUR : null;

t.test('isTimeZone accepts IANA names and refuses the rest', async (t) => {
  for (const name of ['UTC', 'Europe/Paris', 'America/Los_Angeles', 'Pacific/Auckland', 'Etc/GMT+5', 'Asia/Kolkata']) {
    t.ok(isTimeZone(name), name);
  }
  for (const name of [
    '',
    ' ',
    'Foo/Bar',
    'Europe/Nowhere',
    '+01:00',
    '-05:00',
    'UTC ',
    '../../etc/passwd',
    'Europe//Paris',
    'Europe/Paris/',
    'a'.repeat(65),
    'Europe/Paris\u0000',
  ]) {
    t.notOk(isTimeZone(name), JSON.stringify(name));
  }
  for (const value of [undefined, null, 42, {}, ['UTC'], new String('UTC')]) {
    t.notOk(isTimeZone(value), `${typeof value} ${String(value)}`);
  }
  t.equal(canonicalTimeZone('utc'), 'UTC', 'stored as Intl spells it');
  t.equal(canonicalTimeZone('europe/paris'), 'Europe/Paris');
  t.equal(canonicalTimeZone('Nowhere/Land'), undefined);
});

t.test('once: one period for the whole quest', async (t) => {
  const period = periodOf(at('2026-11-26T19:00:00Z'), 'once', 'Europe/Paris');
  t.same(period, { key: 'once', startsAt: new Date(0), endsAt: null });
  t.equal(periodOf(at('2030-01-01T00:00:00Z'), 'once', 'UTC').key, 'once');
});

t.test('Pacific/Auckland: the 25-hour day (DST ends 2026-04-05) and the 23-hour day (starts 2026-09-27)', async (t) => {
  // NZDT (+13) until 2026-04-05 03:00 local, then NZST (+12).
  const long = periodOf(at('2026-04-05T10:00:00Z'), 'daily', 'Pacific/Auckland');
  t.equal(long.key, '2026-04-05');
  t.same(long.startsAt, at('2026-04-04T11:00:00Z'), 'midnight at +13');
  t.same(long.endsAt, at('2026-04-05T12:00:00Z'), 'next midnight at +12');
  t.equal(hours(long), 25);
  // Both sides of the repeated hour are the same day.
  t.equal(periodOf(at('2026-04-04T13:30:00Z'), 'daily', 'Pacific/Auckland').key, '2026-04-05', '02:30 NZDT');
  t.equal(periodOf(at('2026-04-04T14:30:00Z'), 'daily', 'Pacific/Auckland').key, '2026-04-05', '02:30 NZST');

  // NZST (+12) until 2026-09-27 02:00 local, then NZDT (+13).
  const short = periodOf(at('2026-09-27T10:00:00Z'), 'daily', 'Pacific/Auckland');
  t.equal(short.key, '2026-09-27');
  t.same(short.startsAt, at('2026-09-26T12:00:00Z'));
  t.same(short.endsAt, at('2026-09-27T11:00:00Z'));
  t.equal(hours(short), 23);
});

t.test('America/Los_Angeles: 23 hours on 2026-03-08, 25 hours on 2026-11-01', async (t) => {
  const short = periodOf(at('2026-03-08T20:00:00Z'), 'daily', 'America/Los_Angeles');
  t.same(short, { key: '2026-03-08', startsAt: at('2026-03-08T08:00:00Z'), endsAt: at('2026-03-09T07:00:00Z') });
  t.equal(hours(short), 23);
  const long = periodOf(at('2026-11-01T20:00:00Z'), 'daily', 'America/Los_Angeles');
  t.same(long, { key: '2026-11-01', startsAt: at('2026-11-01T07:00:00Z'), endsAt: at('2026-11-02T08:00:00Z') });
  t.equal(hours(long), 25);
  t.equal(periodOf(at('2026-11-01T08:30:00Z'), 'daily', 'America/Los_Angeles').key, '2026-11-01', '01:30 PDT');
  t.equal(periodOf(at('2026-11-01T09:30:00Z'), 'daily', 'America/Los_Angeles').key, '2026-11-01', '01:30 PST');
});

t.test('a minute either side of local midnight are two periods', async (t) => {
  const midnight = at('2026-11-02T08:00:00Z'); // 00:00 PST
  const before = periodOf(new Date(midnight.getTime() - 60_000), 'daily', 'America/Los_Angeles');
  const after = periodOf(new Date(midnight.getTime() + 60_000), 'daily', 'America/Los_Angeles');
  t.equal(before.key, '2026-11-01');
  t.equal(after.key, '2026-11-02');
  t.same(before.endsAt, after.startsAt, 'one ends where the next starts');
  t.same(after.startsAt, midnight);
  t.equal(periodOf(midnight, 'daily', 'America/Los_Angeles').key, '2026-11-02', 'midnight itself opens the day');
  t.equal(periodOf(new Date(midnight.getTime() - 1), 'daily', 'America/Los_Angeles').key, '2026-11-01');
});

t.test("only the quest's zone matters: one instant, two zones, two days", async (t) => {
  const instant = at('2026-06-15T23:30:00Z');
  t.equal(periodOf(instant, 'daily', 'Pacific/Auckland').key, '2026-06-16');
  t.equal(periodOf(instant, 'daily', 'America/Los_Angeles').key, '2026-06-15');
  t.equal(periodOf(instant, 'daily', 'UTC').key, '2026-06-15');
  t.equal(periodOf(at('2026-06-16T00:30:00Z'), 'daily', 'UTC').key, '2026-06-16');
  t.equal(periodOf(instant, 'daily', 'Asia/Kolkata').key, '2026-06-16', 'a half-hour offset');
});

t.test('a day whose midnight is skipped starts at its first local instant', async (t) => {
  // Chile moves from -04 to -03 at 2026-09-06 00:00 local: 00:00-00:59 do not exist.
  const santiago = periodOf(at('2026-09-06T15:00:00Z'), 'daily', 'America/Santiago');
  t.same(santiago, { key: '2026-09-06', startsAt: at('2026-09-06T04:00:00Z'), endsAt: at('2026-09-07T03:00:00Z') });
  t.equal(hours(santiago), 23);
  t.equal(periodOf(at('2026-09-06T03:59:59Z'), 'daily', 'America/Santiago').key, '2026-09-05');
  // Beirut moved to summer time at midnight on 2010-03-28.
  const beirut = periodOf(at('2010-03-28T12:00:00Z'), 'daily', 'Asia/Beirut');
  t.same(beirut, { key: '2010-03-28', startsAt: at('2010-03-27T22:00:00Z'), endsAt: at('2010-03-28T21:00:00Z') });
  // Sao Paulo ended summer time at midnight on 2011-02-20, back to 23:00 the day before: a 25-hour Saturday.
  const saturday = periodOf(at('2011-02-19T12:00:00Z'), 'daily', 'America/Sao_Paulo');
  t.same(saturday, { key: '2011-02-19', startsAt: at('2011-02-19T02:00:00Z'), endsAt: at('2011-02-20T03:00:00Z') });
  // Samoa skipped 2011-12-30 altogether: the 29th ends where the 31st starts.
  t.same(periodOf(at('2011-12-29T12:00:00Z'), 'daily', 'Pacific/Apia').endsAt, at('2011-12-30T10:00:00Z'));
  t.same(periodOf(at('2011-12-30T12:00:00Z'), 'daily', 'Pacific/Apia').startsAt, at('2011-12-30T10:00:00Z'));
  t.equal(periodOf(at('2011-12-30T12:00:00Z'), 'daily', 'Pacific/Apia').key, '2011-12-31');
});

t.test('weekly: ISO weeks from Monday local midnight, across a year boundary', async (t) => {
  const last = periodOf(at('2026-12-31T12:00:00Z'), 'weekly', 'UTC');
  t.same(last, { key: '2026-W53', startsAt: at('2026-12-28T00:00:00Z'), endsAt: at('2027-01-04T00:00:00Z') });
  t.equal(periodOf(at('2027-01-03T23:59:59Z'), 'weekly', 'UTC').key, '2026-W53', 'Sunday 2027-01-03 is still W53');
  t.equal(periodOf(at('2027-01-04T00:00:00Z'), 'weekly', 'UTC').key, '2027-W01');
  t.equal(periodOf(at('2025-12-29T12:00:00Z'), 'weekly', 'UTC').key, '2026-W01', 'a week that starts in December');
  t.equal(periodOf(at('2026-11-26T12:00:00Z'), 'weekly', 'UTC').key, '2026-W48');
  // The week that holds Los Angeles' fall-back is 169 hours, from local Monday midnight.
  const week = periodOf(at('2026-11-01T20:00:00Z'), 'weekly', 'America/Los_Angeles');
  t.same(week, { key: '2026-W44', startsAt: at('2026-10-26T07:00:00Z'), endsAt: at('2026-11-02T08:00:00Z') });
  t.equal(hours(week), 169);
  // Sunday night in Auckland is already Monday there: next week.
  t.equal(periodOf(at('2027-01-03T12:00:00Z'), 'weekly', 'Pacific/Auckland').key, '2027-W01');
});

t.test('periodByKey reads a key back, and refuses keys that name nothing', async (t) => {
  t.same(
    periodByKey('2026-03-08', 'daily', 'America/Los_Angeles'),
    periodOf(at('2026-03-08T20:00:00Z'), 'daily', 'America/Los_Angeles'),
  );
  t.same(periodByKey('2026-W53', 'weekly', 'UTC'), periodOf(at('2026-12-31T12:00:00Z'), 'weekly', 'UTC'));
  t.same(
    periodByKey('2027-W01', 'weekly', 'Pacific/Auckland'),
    periodOf(at('2027-01-03T12:00:00Z'), 'weekly', 'Pacific/Auckland'),
  );
  t.same(periodByKey('once', 'once', 'UTC'), { key: 'once', startsAt: new Date(0), endsAt: null });
  for (const [key, period] of [
    ['2026-02-30', 'daily'],
    ['2026-13-01', 'daily'],
    ['2026-1-01', 'daily'],
    ['2027-W53', 'weekly'],
    ['2026-W00', 'weekly'],
    ['2026-W48', 'daily'],
    ['2026-11-26', 'weekly'],
    ['once', 'daily'],
    ['2026-11-26', 'once'],
    ['', 'daily'],
    [' 2026-11-26', 'daily'],
  ] as const) {
    t.equal(periodByKey(key, period, 'UTC'), undefined, `${JSON.stringify(key)} is no ${period} key`);
  }
});

t.test('unitIndex: consecutive integers for consecutive local days and weeks, across DST', async (t) => {
  const zone = 'America/Los_Angeles';
  const saturday = unitIndex(at('2026-03-07T20:00:00Z'), 'day', zone);
  t.equal(unitIndex(at('2026-03-08T20:00:00Z'), 'day', zone), saturday + 1, 'the 23-hour Sunday');
  t.equal(unitIndex(at('2026-03-09T07:30:00Z'), 'day', zone), saturday + 2, 'Monday 00:30 PDT');
  t.equal(unitIndex(at('2026-03-09T06:30:00Z'), 'day', zone), saturday + 1, 'Sunday 23:30 PDT');
  const halloween = unitIndex(at('2026-10-31T20:00:00Z'), 'day', zone);
  t.equal(unitIndex(at('2026-11-01T08:30:00Z'), 'day', zone), halloween + 1, '01:30 PDT');
  t.equal(unitIndex(at('2026-11-01T09:30:00Z'), 'day', zone), halloween + 1, '01:30 PST: the same day');
  t.equal(unitIndex(at('2026-11-02T08:00:00Z'), 'day', zone), halloween + 2);
  t.equal(
    unitIndex(at('2026-04-05T10:00:00Z'), 'day', 'Pacific/Auckland'),
    unitIndex(at('2026-04-04T10:00:00Z'), 'day', 'Pacific/Auckland') + 1,
  );

  const w53 = unitIndex(at('2026-12-31T12:00:00Z'), 'week', 'UTC');
  t.ok(Number.isInteger(w53));
  t.equal(unitIndex(at('2027-01-04T00:00:00Z'), 'week', 'UTC'), w53 + 1, 'W53 then W01');
  t.equal(unitIndex(at('2027-01-03T23:59:59Z'), 'week', 'UTC'), w53, 'Sunday is the same week');
  t.equal(unitIndex(at('2026-11-02T08:00:00Z'), 'week', zone), unitIndex(at('2026-11-01T20:00:00Z'), 'week', zone) + 1);
  // Every day of a year, one after the other.
  let previous = unitIndex(at('2026-01-01T12:00:00Z'), 'day', 'Europe/Paris');
  for (let day = 1; day < 365; day++) {
    const next = unitIndex(new Date(Date.UTC(2026, 0, 1 + day, 12)), 'day', 'Europe/Paris');
    if (next !== previous + 1) t.fail(`day ${day}: ${next} after ${previous}`);
    previous = next;
  }
});

t.test('garbage is refused, not guessed', async (t) => {
  t.throws(() => periodOf(new Date(Number.NaN), 'daily', 'UTC'), RangeError);
  t.throws(() => periodOf('2026-01-01' as unknown as Date, 'daily', 'UTC'), RangeError);
  t.throws(() => periodOf(at('2026-01-01T00:00:00Z'), 'daily', 'Nowhere/Land'), RangeError);
  t.throws(() => periodOf(at('2026-01-01T00:00:00Z'), 'monthly' as never, 'UTC'), RangeError);
  t.throws(() => unitIndex(at('2026-01-01T00:00:00Z'), 'month' as never, 'UTC'), RangeError);
  t.throws(() => unitIndex(at('2026-01-01T00:00:00Z'), 'day', ''), RangeError);
  t.throws(() => periodByKey('2026-01-01', 'daily', '+01:00'), RangeError);
});

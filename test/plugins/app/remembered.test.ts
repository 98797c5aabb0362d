import t from 'tap';
import { remembered } from '../../../plugins/app/remembered.js';

t.test('an answer is reused for its time, per key, and read again after', async (t) => {
  const loads: string[] = [];
  const read = remembered(40, 10, async (key) => {
    loads.push(key);
    return `${key}:${loads.length}`;
  });
  t.equal(await read('a'), 'a:1');
  t.equal(await read('a'), 'a:1', 'reused');
  t.equal(await read('b'), 'b:2', 'another key loads');
  await new Promise((resolve) => setTimeout(resolve, 60));
  t.equal(await read('a'), 'a:3', 'read again once expired');
});

t.test('0 ms never reuses; past its size the memory starts over; a failed load is not kept', async (t) => {
  let loads = 0;
  const never = remembered(0, 10, async () => ++loads);
  await never('a');
  await never('a');
  t.equal(loads, 2);
  loads = 0;
  const small = remembered(60_000, 2, async () => ++loads);
  await small('a');
  await small('b');
  await small('c'); // the third key clears the two kept
  await small('a');
  t.equal(loads, 4, 'a was forgotten');
  let fail = true;
  const flaky = remembered(60_000, 10, async () => {
    if (fail) throw new Error('down');
    return 'up';
  });
  await t.rejects(flaky('a'), /down/);
  fail = false;
  t.equal(await flaky('a'), 'up');
});

t.test('callers asking while a key loads share the load; a failed shared load fails them all', async (t) => {
  let loads = 0;
  let release: (value: string) => void = () => {};
  const read = remembered(60_000, 10, async () => {
    loads += 1;
    return new Promise<string>((resolve) => {
      release = resolve;
    });
  });
  const burst = [read('a'), read('a'), read('a')];
  release('once');
  t.same(await Promise.all(burst), ['once', 'once', 'once']);
  t.equal(loads, 1, 'one load for the burst');
  t.equal(await read('a'), 'once', 'and kept after');

  let fail = 0;
  const flaky = remembered(60_000, 10, async () => {
    fail += 1;
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (fail === 1) throw new Error('down');
    return 'up';
  });
  const failed = await Promise.allSettled([flaky('a'), flaky('a')]);
  t.same(
    failed.map((result) => result.status),
    ['rejected', 'rejected'],
  );
  t.equal(await flaky('a'), 'up', 'the failure was not kept');
  t.equal(fail, 2);
});

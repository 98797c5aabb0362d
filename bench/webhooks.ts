import { parseArgs } from 'node:util';
import { deliverable, signatureFor, startStripeStandIn } from '../test/support/stripe.js';
import { BENCH_SERVER_ENV, benchDatabase, benchToken, databaseKind, median, percentile, startServer } from './lib.js';

/**
 * Webhook handling under load, against the built server and a Stripe stand-in:
 *   npm run bench:webhooks -- --db embedded|external [--orders 2000] [--concurrency 50]
 * Makes `--orders` orders through POST /api/checkout/sessions, pays each session at the stand-in,
 * signs one `checkout.session.completed` per order ahead of time, then delivers them with
 * `--concurrency` deliveries in flight: every one verified and fulfilled (one top-up each).
 * Reports the deliveries' median and p99 and checks that each order was credited exactly once.
 */

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'embedded' },
    orders: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '50' },
  },
});
const kind = databaseKind(values.db);
const orderCount = Math.min(Number(values.orders), 20_000);
const concurrency = Math.min(Number(values.concurrency), 500);

const stripe = await startStripeStandIn();
const database = await benchDatabase(kind);
try {
  const server = await startServer(
    { ...database.env, ...BENCH_SERVER_ENV, ...stripe.env, CRON_INTERNAL: 'false' },
    3514,
  );
  try {
    const api = (path: string) => `${server.url}/api${path}`;
    const admin = benchToken({ sub: 'bench-admin', role: 'admin' });
    const post = async (path: string, token: string, body: unknown, status: number) => {
      const res = await fetch(api(path), {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status !== status) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
      return ((await res.json()) as { data: Record<string, string> }).data;
    };
    const product = await post('/admin/products', admin, { name: 'Bench coins', coins: 100 }, 201);
    const price = await post(`/admin/products/${product.id}/prices`, admin, { currency: 'usd', unitAmount: 199 }, 201);
    const fans = Array.from({ length: 50 }, (_, i) => benchToken({ sub: `bench-buyer-${i}` }));

    // Orders, paid at the stand-in, and their signed events: made before the timed part.
    const events: { body: string; signature: string }[] = [];
    let next = 0;
    await Promise.all(
      fans.map(async (token) => {
        while (next < orderCount) {
          next += 1;
          const order = await post('/checkout/sessions', token, { priceId: price.id }, 201);
          const session = [...stripe.sessions.values()].find(
            (candidate) => candidate.client_reference_id === order.orderId,
          );
          if (!session) throw new Error(`no session for ${order.orderId}`);
          const body = stripe.event('checkout.session.completed', stripe.pay(session.id)).body;
          events.push({ body, signature: signatureFor(body) });
        }
      }),
    );

    const latencies: number[] = [];
    let errors = 0;
    let cursor = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (cursor < events.length) {
          const event = events[cursor++] as { body: string; signature: string };
          const sent = performance.now();
          const res = await fetch(`${server.url}${deliverable.path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': event.signature },
            body: event.body,
          });
          await res.arrayBuffer();
          latencies.push(performance.now() - sent);
          if (res.status !== 200) errors += 1;
        }
      }),
    );
    const wallMs = performance.now() - started;

    // Checked through the API: every buyer's balance is 100 coins per order paid, and every order fulfilled.
    const get = async (path: string, token: string) =>
      (await (await fetch(api(path), { headers: { authorization: `Bearer ${token}` } })).json()) as {
        data: unknown;
        nextCursor?: string | null;
      };
    let balances = 0;
    for (const token of fans) balances += ((await get('/wallet', token)).data as { balance: number }).balance;
    let fulfilled = 0;
    let page: string | null | undefined = '';
    while (page !== null && page !== undefined) {
      const listed = await get(`/admin/orders?limit=200${page ? `&cursor=${page}` : ''}`, admin);
      fulfilled += (listed.data as { status: string }[]).filter((order) => order.status === 'fulfilled').length;
      page = listed.nextCursor;
    }
    const credits = { coins: balances, orders: fulfilled };
    console.log(
      `Stripe webhooks on ${kind} PostgreSQL: ${events.length} distinct checkout.session.completed events, ${concurrency} in flight (Node ${process.version})\n`,
    );
    console.log('| deliveries | per second | median ms | p99 ms | non-200 |');
    console.log('|---|---|---|---|---|');
    console.log(
      `| ${latencies.length} | ${((latencies.length / wallMs) * 1000).toFixed(0)} | ${median(latencies).toFixed(1)} | ${percentile(latencies, 99).toFixed(1)} | ${errors} |`,
    );
    console.log(
      `\norders fulfilled: ${credits.orders} of ${events.length}; coins credited: ${credits.coins} (${events.length * 100} expected: each order exactly once)`,
    );
    if (errors > 0 || credits.coins !== events.length * 100 || credits.orders !== events.length) process.exitCode = 1;
  } finally {
    await server.stop();
  }
} finally {
  await database.cleanup();
  await stripe.close();
}

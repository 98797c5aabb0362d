import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy on loopback between the app and a server (PostgreSQL, Redis), to cut the network
 * and restore it while the app runs:
 * - `partition()`: nothing gets through in either direction and new connections hang, as in a
 *   network cut (bytes wait, as TCP retransmits them, and flow again on `restore()`);
 * - `refuse()`: every connection is reset and new ones refused, as when the server is down;
 * - `restore()`: traffic flows again; `retarget(port)` points new connections elsewhere (a
 *   server restarted on another port).
 * A side that closes closes its other side too (a proxy cannot keep a half-dead pair forever).
 */
export interface TcpProxy {
  port: number;
  /** The same URL with the proxy's host and port. */
  urlFor(url: string): string;
  partition(): void;
  refuse(): void;
  restore(): void;
  retarget(port: number): void;
  /** Connections open through the proxy now. */
  readonly connections: number;
  close(): Promise<void>;
}

/** A proxy to the server a URL names (PostgreSQL's port when it names none). */
export function startTcpProxyTo(url: string): Promise<TcpProxy> {
  const { hostname, port } = new URL(url);
  return startTcpProxy({ host: hostname, port: Number(port || 5432) });
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: 'open' | 'partitioned' | 'refusing' = 'open';
  let targetPort = target.port;
  const pairs = new Set<[Socket, Socket]>();

  const server: Server = createServer((client) => {
    if (mode === 'refusing') {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(targetPort, target.host);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => client.write(chunk));
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of pair) {
      socket.on('close', end);
      socket.on('error', end);
    }
    if (mode === 'partitioned') {
      client.pause();
      upstream.pause();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    port,
    urlFor(url: string) {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    partition() {
      mode = 'partitioned';
      for (const [client, upstream] of pairs) {
        client.pause();
        upstream.pause();
      }
    },
    refuse() {
      mode = 'refusing';
      for (const [client, upstream] of pairs) {
        client.resetAndDestroy();
        upstream.destroy();
      }
      pairs.clear();
    },
    restore() {
      mode = 'open';
      for (const [client, upstream] of pairs) {
        client.resume();
        upstream.resume();
      }
    },
    retarget(next: number) {
      targetPort = next;
    },
    get connections() {
      return pairs.size;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const [client, upstream] of pairs) {
          client.destroy();
          upstream.destroy();
        }
        server.close(() => resolve());
      }),
  };
}

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import t from 'tap';
import { sendWebhook } from '../../../../plugins/app/webhooks/transport.js';

// https with a pinned address keeps TLS about the name: the receiver is asked for the URL's host
// name (SNI), and its certificate is checked (here a self-signed one, which must be refused).
// The certificate is made by the openssl command for this test.

const HOST = 'receiver.invalid';

function selfSignedCertificate(): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'webhook-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        `/CN=${HOST}`,
        '-addext',
        `subjectAltName=DNS:${HOST}`,
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

t.test('TLS: SNI is the host name, and an untrusted certificate fails the attempt', async (t) => {
  const context = createSecureContext(selfSignedCertificate());
  const serverNames: (string | undefined)[] = [];
  let requests = 0;
  const server = createServer(
    {
      SNICallback: (servername, done) => {
        serverNames.push(servername);
        done(null, context);
      },
    },
    (_request, response) => {
      requests++;
      response.end();
    },
  );
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const port = (server.address() as AddressInfo).port;
  let resolved = 0;
  const resolve = async () => {
    resolved++;
    return [{ address: '127.0.0.1', family: 4 as const }];
  };

  const result = await sendWebhook(
    { url: `https://${HOST}:${port}/in`, headers: {}, body: '{}' },
    { allowPrivate: true, resolve, timeoutMs: 5000 },
  );
  t.match(result, { outcome: 'failed', status: null, address: '127.0.0.1', error: /self[- ]signed/i });
  t.same(serverNames, [HOST], 'the TLS handshake named the host, not the address');
  t.equal(requests, 0, 'no request went over an untrusted connection');
  t.equal(resolved, 1);
});

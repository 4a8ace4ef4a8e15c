import assert from 'node:assert/strict';
import { request } from 'node:http';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { backends, type TestDb } from './helpers/backends.js';
import { rest, startServer, type TestServer } from './helpers/server.js';

const COMMIT = JSON.stringify({
  commitHash: 'c0ffee0000000000000000000000000000000002',
  nodes: [{ id: 'file::a.ts', name: 'a.ts', type: 'FILE', filePath: 'a.ts' }],
  edges: [],
});

/** POST /api/v1/graphs over node:http, the body written in the given pieces (one write each). */
function post(
  url: string,
  path: string,
  headers: Record<string, string>,
  pieces: Buffer[],
): Promise<{ status: number; body: any }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: hostname, port, method: 'POST', path, headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on('error', reject);
    const write = (i: number) => {
      if (i === pieces.length) return void req.end();
      req.write(pieces[i]);
      setImmediate(() => write(i + 1));
    };
    write(0);
  });
}

for (const backend of backends) {
  describe(`graph upload: a gzip body without Content-Encoding (${backend.name})`, () => {
    let database: TestDb;
    let server: TestServer;
    before(async () => {
      database = await backend.open();
      server = await startServer(database);
    });
    after(async () => {
      await server?.close();
      await database?.dispose();
    });

    test('is refused as looking gzip-compressed, naming (body) and the header to send; nothing is stored', async () => {
      const gzipped = gzipSync(COMMIT);
      // Whole, and with its first byte on its own (the check must not depend on how the bytes arrive).
      for (const pieces of [[gzipped], [gzipped.subarray(0, 1), gzipped.subarray(1)]]) {
        const r = await post(server.url, '/api/v1/graphs?repo=gz', {}, pieces);
        assert.equal(r.status, 400, JSON.stringify(r.body));
        assert.equal(r.body.error.code, 'VALIDATION_ERROR');
        assert.deepEqual(r.body.error.details.issues, [
          {
            field: '(body)',
            message:
              'looks gzip-compressed (it begins with the bytes 1f 8b): send it with the header Content-Encoding: gzip',
          },
        ]);
        assert.match(r.body.error.message, /^\(body\): looks gzip-compressed/);
      }
      assert.deepEqual((await rest(server.url, 'GET', '/api/v1/graphs')).body.graphs, [], 'nothing stored');

      // The same bytes with the header, and the JSON as it is, are stored.
      const withHeader = await post(server.url, '/api/v1/graphs?repo=gz', { 'content-encoding': 'gzip' }, [gzipped]);
      assert.equal(withHeader.status, 201, JSON.stringify(withHeader.body));
      const plain = await post(server.url, '/api/v1/graphs?repo=plain', {}, [
        Buffer.from(COMMIT.slice(0, 1)),
        Buffer.from(COMMIT.slice(1)),
      ]);
      assert.equal(plain.status, 201, JSON.stringify(plain.body));
      // Not gzip, not JSON: still the parser's own message.
      const junk = await post(server.url, '/api/v1/graphs?repo=junk', {}, [Buffer.from('\x1fnot json')]);
      assert.equal(junk.status, 400);
      assert.match(junk.body.error.message, /^\(body\): not valid JSON/);
    });
  });
}

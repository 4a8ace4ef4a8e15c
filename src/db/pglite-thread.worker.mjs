// The thread that runs embedded PGlite (see pglite-thread.ts): plain JavaScript, so that it loads
// the same way under tsx, scripts/start.js and plain node, with no TypeScript loader in the thread.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, parse, protocol } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';

/** An error as plain data: its message, name and stack, and its string and number fields (SQLSTATE `code`, `detail`, …). */
function serialize(error) {
  if (!(error instanceof Error)) return { message: String(error) };
  const out = { message: error.message, name: error.name, stack: error.stack };
  for (const [key, value] of Object.entries(error)) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') out[key] = value;
  }
  return out;
}

const port = parentPort;
let db;
try {
  db = await PGlite.create({
    dataDir: workerData.dataDir,
    extensions: { vector },
    startParams: workerData.startParams,
  });
  port.postMessage({ type: 'ready' });
} catch (error) {
  port.postMessage({ type: 'failed', error: serialize(error) });
  port.close();
}

/**
 * Recurring statements run as named prepared statements, parsed and planned once (after Postgres's
 * five custom plans, a generic one when it costs no more), as the Postgres pool's connections do
 * (preparing-client.ts): PGlite's own `query` parses and plans every statement again, in WASM.
 * A text is prepared on its second run, up to MAX_PREPARED of them; the rest run through `query`.
 * A text without parameters is prepared too: `query` sends every text by the extended protocol, one
 * statement each (the dialect sends scripts of several through `exec`: isPreparableQuery).
 */
const MAX_PREPARED = 200;
const RUNS_BEFORE_PREPARING = 2;
const COUNTED_TEXTS = 5_000;
/** Text → its prepared statement (name, parameter type OIDs). */
const statements = new Map();
/** Text → runs so far, until it is prepared. */
const runs = new Map();
/** Texts whose prepared result type went stale (a migration changed what `select *` returns): run unnamed. */
const stale = new Set();
let statementCount = 0;

function shouldPrepare(sql) {
  if (statements.has(sql)) return true;
  if (stale.has(sql) || statements.size >= MAX_PREPARED) return false;
  const seen = (runs.get(sql) ?? 0) + 1;
  if (seen >= RUNS_BEFORE_PREPARING) {
    runs.delete(sql);
    return true;
  }
  if (runs.size >= COUNTED_TEXTS) runs.clear();
  runs.set(sql, seen);
  return false;
}

/** What PGlite's `query` does (parse, describe, bind, describe, execute, sync), with the parse and its describe done once per text. */
async function queryPrepared(sql, params) {
  try {
    return await db.runExclusive(async () => {
      const send = (message) => db.execProtocolStream(message, { syncToFs: false });
      const messages = [];
      try {
        let statement = statements.get(sql);
        if (!statement) {
          const name = `dsh_${++statementCount}`;
          await send(protocol.serialize.parse({ name, text: sql }));
          const paramTypes = parse.parseDescribeStatementResults(
            await send(protocol.serialize.describe({ type: 'S', name })),
          );
          statement = { name, paramTypes };
          statements.set(sql, statement);
        }
        const values = params.map((value, i) => {
          if (value === null || value === undefined) return null;
          const serializer = db.serializers[statement.paramTypes[i]];
          return serializer ? serializer(value) : value.toString();
        });
        messages.push(...(await send(protocol.serialize.bind({ statement: statement.name, values }))));
        messages.push(...(await send(protocol.serialize.describe({ type: 'P' }))));
        messages.push(...(await send(protocol.serialize.execute({}))));
      } finally {
        messages.push(...(await send(protocol.serialize.sync())));
      }
      await db.syncToFs();
      return parse.parseResults(messages, db.parsers)[0];
    });
  } catch (error) {
    if (error?.code !== '0A000' || !String(error.message).includes('cached plan must not change result type'))
      throw error;
    const statement = statements.get(sql);
    statements.delete(sql);
    stale.add(sql);
    if (statement)
      await db.runExclusive(async () => {
        await db.execProtocolStream(protocol.serialize.close({ type: 'S', name: statement.name }), { syncToFs: false });
        await db.execProtocolStream(protocol.serialize.sync(), { syncToFs: false });
      });
    // In a transaction the refusal has aborted it: a retry would only hide the cause.
    if (db.isInTransaction()) throw error;
    return db.query(sql, params);
  }
}

/** Listen ids → PGlite's unlisten functions. */
const listeners = new Map();

async function run(message) {
  switch (message.kind) {
    case 'query': {
      const params = message.params ?? [];
      const result = shouldPrepare(message.sql)
        ? await queryPrepared(message.sql, params)
        : await db.query(message.sql, params);
      return { rows: result.rows, affectedRows: result.affectedRows };
    }
    case 'exec':
      return (await db.exec(message.sql)).map((r) => ({ rows: r.rows, affectedRows: r.affectedRows }));
    case 'listen': {
      const unlisten = await db.listen(message.channel, (payload) =>
        port.postMessage({ type: 'notify', listenId: message.listenId, payload }),
      );
      listeners.set(message.listenId, unlisten);
      return null;
    }
    case 'unlisten': {
      const unlisten = listeners.get(message.listenId);
      listeners.delete(message.listenId);
      await unlisten?.();
      return null;
    }
    case 'close':
      await db.close();
      return null;
    default:
      throw new Error(`unknown request ${message.kind}`);
  }
}

if (db) {
  port.on('message', (message) => {
    run(message).then(
      (result) => {
        port.postMessage({ type: 'result', id: message.id, result });
        if (message.kind === 'close') port.close();
      },
      (error) => port.postMessage({ type: 'result', id: message.id, error: serialize(error) }),
    );
  });
}

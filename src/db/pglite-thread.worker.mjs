// The thread that runs embedded PGlite (see pglite-thread.ts): plain JavaScript, so that it loads
// the same way under tsx, scripts/start.js and plain node, with no TypeScript loader in the thread.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
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

/** Listen ids → PGlite's unlisten functions. */
const listeners = new Map();

async function run(message) {
  switch (message.kind) {
    case 'query': {
      const result = await db.query(message.sql, message.params);
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

import { openDb } from '../../src/db/client.js';
import { compactKeywordStats } from '../../src/db/queries/keyword-stats.js';
const db = await openDb({ databaseUrl: process.env.DATABASE_URL! });
console.log('folded', await compactKeywordStats(db.kysely));
await db.close();

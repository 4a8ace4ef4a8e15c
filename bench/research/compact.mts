import { openDb } from '/work/main/src/db/client.js';
import { compactKeywordStats } from '/work/main/src/db/queries/keyword-stats.js';
const db = await openDb({ databaseUrl: process.env.DATABASE_URL });
console.log('folded', await compactKeywordStats(db.kysely));
await db.close();

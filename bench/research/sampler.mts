import pg from 'pg';
const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
await c.connect();
const t0 = Date.now();
while (Date.now() - t0 < 20000) {
  const r = await c.query(
    `select pid, backend_type, state, wait_event_type, wait_event, left(query,60) q from pg_stat_activity where pid <> pg_backend_pid() and (state = 'active' or backend_type not in ('client backend')) and backend_type not in ('walwriter','background writer','logical replication launcher','autovacuum launcher')`,
  );
  const act = r.rows.filter(
    (x) => x.state === 'active' || (x.backend_type !== 'client backend' && x.wait_event !== 'CheckpointerMain'),
  );
  if (act.length)
    console.log(
      ((Date.now() - t0) / 1000).toFixed(2),
      JSON.stringify(act.map((x) => [x.pid, x.wait_event, x.q.slice(0, 30)])),
    );
  await new Promise((r) => setTimeout(r, 40));
}
await c.end();

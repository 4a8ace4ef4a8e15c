import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { CompiledQuery, sql, type RawBuilder } from 'kysely';
import { compactKeywordStats } from '../src/db/queries/keyword-stats.js';
import {
  hybridSearchSql,
  keywordRanksSql,
  searchMemories,
  vectorRanksSql,
} from '../src/db/queries/memories/hybrid-search.js';
import { candidatesFor } from '../src/domain/memory/search-memory.js';
import { vectorLiteral } from '../src/db/vector-literal.js';
import type { SearchFilters } from '../src/db/queries/memories/search-filters.js';
import { backends, type TestDb } from './helpers/backends.js';
import { eventually } from './helpers/eventually.js';
import { taskInput } from './helpers/task-input.js';
import { FakeOllama } from '../support/fake-ollama.js';
import { connectMcp, rest, startServer, type TestServer } from './helpers/server.js';

for (const backend of backends) {
  describe(`semantic memory: store, hybrid search, delete (${backend.name})`, () => {
    let database: TestDb;
    let fake: FakeOllama;
    let server: TestServer;
    let client: Client;

    before(async () => {
      database = await backend.open();
      fake = await new FakeOllama().start();
      server = await startServer(database, {
        embedding: { provider: 'ollama', ollamaHost: fake.url, model: 'nomic-embed-text', timeoutMs: 5_000 },
      });
      client = (await connectMcp(server.url)).client;
    });
    after(async () => {
      await client?.close();
      await server?.close();
      await fake?.stop();
      await database?.dispose();
    });

    const api = (method: string, path: string, body?: unknown) => rest(server.url, method, path, body);
    const store = async (args: Record<string, unknown>) => {
      const r = await api('POST', '/api/v1/memories', args);
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body;
    };
    const search = async (args: Record<string, unknown>) => {
      const r = await api('POST', '/api/v1/memories/search', args);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body;
    };
    /**
     * A new project with `count` memories written straight to the table (the trigger counts their
     * words), stored in the order of `g` (1…count); `content` is an SQL expression of `g`.
     */
    const seedProject = async (id: string, title: string, count: number, content: RawBuilder<string>) => {
      const { kysely } = database.db;
      await sql`insert into intervention_plans (id, title, expected_outcome) values (${id}, ${title}, 'none')`.execute(
        kysely,
      );
      await sql`
        insert into semantic_memory (id, project_id, content, content_type, content_format, importance_score, content_hash)
        select left(md5(${id} || g), 12), ${id}, ${content}, 'context', 'text', 0.5, md5(${id} || g)
          from generate_series(1, ${count}::int) g order by g`.execute(kysely);
    };
    const callTool = async (name: string, args: Record<string, unknown>) => {
      const r = (await client.callTool({ name, arguments: args })) as any;
      return { ...r, text: r.content[0].text as string };
    };

    test('store embeds the content with the document prefix and returns the spec fields', async () => {
      const content =
        'Decision: Use FastAPI for API layer due to async/await support and automatic OpenAPI generation. ' +
        'Benchmark results show 2.5x better performance than Flask for async workloads.';
      const before = fake.calls.length;
      const r = await callTool('devstream_store_memory', {
        content,
        content_type: 'decision',
        keywords: ['FastAPI', 'async', ' api ', 'async'],
        project: 'Memory Tests',
      });
      assert.equal(r.isError, undefined, r.text);
      const s = r.structuredContent;
      assert.equal(s.success, true);
      assert.match(s.memory_id, /^[0-9a-f]{12}$/);
      assert.equal(s.content_type, 'decision');
      assert.equal(s.embedding_generated, true);
      assert.equal(s.embedding_model, 'nomic-embed-text');
      assert.equal(s.embedding_dimensions, 768);
      assert.deepEqual(s.keywords, ['fastapi', 'async', 'api'], 'keywords trimmed, lowercased, without repeats');
      assert.equal(s.content_length, content.length);
      assert.equal(s.source, 'mcp_user_input');
      assert.equal(s.project, 'Memory Tests');
      assert.equal(s.duplicate, false);
      assert.equal(s.embedding_note, null);
      assert.ok(!Number.isNaN(Date.parse(s.timestamp)));
      // decision 0.8 + length 0.2·(len/1000) + keywords 0.2·(3/10), clamped to 1.0, two decimals
      assert.equal(s.importance_score, Math.round(Math.min(1, 0.8 + (content.length / 1000) * 0.2 + 0.06) * 100) / 100);

      const call = fake.calls.at(-1)!;
      assert.equal(fake.calls.length, before + 1, 'one embed call');
      assert.equal(call.model, 'nomic-embed-text');
      assert.deepEqual(call.input, [`search_document: ${content}`]);

      assert.match(r.text, /✅ \*\*Memory Stored Successfully\*\*/);
      assert.match(r.text, /🧠 \*\*Embedding\*\*: ✅ Generated \(768D, nomic-embed-text\)/);
      assert.match(r.text, new RegExp(`🆔 \\*\\*Memory ID\\*\\*: \`${s.memory_id}\``));

      const got = await api('GET', `/api/v1/memories/${s.memory_id.toUpperCase()}`);
      assert.equal(got.status, 200);
      assert.deepEqual(Object.keys(got.body.memory).sort(), [
        'access_count',
        'content',
        'content_format',
        'content_type',
        'created_at',
        'created_by',
        'embedding_dimensions',
        'embedding_model',
        'importance_score',
        'keywords',
        'last_accessed_at',
        'memory_id',
        'project',
        'task_id',
      ]);
      assert.equal(got.body.memory.content, content);
      assert.equal(got.body.memory.content_format, 'text');
      assert.equal(got.body.memory.embedding_dimensions, 768);
      assert.equal(got.body.memory.access_count, 0);
      assert.equal(got.body.memory.task_id, null);
    });

    test('content format is detected: JSON, code, Markdown, else by type', async () => {
      const formats: Array<[string, string, string]> = [
        ['{"retries": 3, "backoff": "exponential"}', 'context', 'json'],
        ['function retry(n) { return n * 2 }', 'learning', 'code'],
        ['## Retry policy\nUse **exponential** backoff.', 'documentation', 'markdown'],
        ['x = compute_totals(rows)', 'code', 'code'],
        ['plain words about retries', 'output', 'text'],
      ];
      for (const [content, type, format] of formats) {
        const s = await store({ content, content_type: type, project: 'Formats' });
        const got = await api('GET', `/api/v1/memories/${s.memory_id}`);
        assert.equal(got.body.memory.content_format, format, content);
      }
    });

    test('hybrid search: query prefix, both ranks reported, the text names the method', async () => {
      await store({
        content: 'Redis cluster chosen for the session cache; eviction policy allkeys-lru.',
        content_type: 'decision',
        project: 'Hybrid',
      });
      await store({
        content: 'The session cache misses spiked after the deploy.',
        content_type: 'error',
        project: 'Hybrid',
      });
      await store({ content: 'Unrelated note about the CSS grid layout.', content_type: 'context', project: 'Hybrid' });

      const r = await callTool('devstream_search_memory', { query: 'session cache eviction', project: 'Hybrid' });
      assert.equal(r.isError, undefined, r.text);
      assert.deepEqual(fake.calls.at(-1)!.input, ['search_query: session cache eviction']);
      const s = r.structuredContent;
      assert.equal(s.method, 'hybrid');
      assert.equal(s.method_note, null);
      assert.equal(s.query, 'session cache eviction');
      assert.equal(s.total, s.results.length);
      const top = s.results[0];
      assert.match(top.content, /Redis cluster/);
      assert.equal(top.vector_rank, 1);
      assert.equal(top.keyword_rank, 1);
      assert.ok(top.distance >= 0 && top.distance < 1);
      assert.ok(Math.abs(top.rrf_score - 1) < 1e-9, 'first in both branches: the fused score is 1');
      for (let i = 1; i < s.results.length; i++)
        assert.ok(s.results[i - 1].rrf_score >= s.results[i].rrf_score, 'ordered by the fused score');
      assert.match(r.text, /🔍 \*\*DevStream Hybrid Search Results\*\*/);
      assert.match(r.text, /Method: Hybrid \(Vector \+ Keyword\)/);
      assert.match(r.text, /1\. 🎯 \*\*DECISION\*\* Memory/);
      assert.match(r.text, /📊 Relevance: HIGH \(RRF Score: 1\.0000\)/);
      assert.match(r.text, /🔬 Vector Rank: #1 \(distance: [\d.]+\) • Keyword Rank: #1/);
    });

    test('the vector branch finds what no keyword matches', async () => {
      await store({
        content: 'Parking rules for the car at the office garage.',
        content_type: 'context',
        project: 'Synonyms',
      });
      const raw = await api('POST', '/api/v1/memories/search', { query: 'automobile', project: 'Synonyms' });
      assert.match(
        raw.headers.get('server-timing') ?? '',
        /^embed;dur=[\d.]+, op;dur=[\d.]+$/,
        'Server-Timing tells the embedder apart',
      );
      const s = await search({ query: 'automobile', project: 'Synonyms' });
      assert.equal(s.method, 'hybrid');
      assert.equal(s.results.length, 1);
      assert.match(s.results[0].content, /car at the office/);
      assert.equal(s.results[0].keyword_rank, null, 'no keyword matches "automobile"');
      assert.equal(s.results[0].vector_rank, 1);
    });

    test('a keyword hit on a rare word stays first, ahead of weak vector neighbours', async () => {
      // The fake model counts every word, stop words included, so these notes are the query's
      // nearest vectors while sharing one common word with it; the answer shares one rare word.
      const answer = await store({
        content: 'Zeppelin telemetry dropped during ascent; ground station rebooted twice.',
        content_type: 'context',
        project: 'Rare Word',
      });
      const fillers = ['printer', 'kettle', 'elevator', 'badge', 'coffee', 'window', 'parking', 'heater'];
      for (const [i, thing] of fillers.entries()) {
        await store({
          content: `What was the problem with the ${thing} on the ${fillers[(i + 3) % fillers.length]} floor of the office?`,
          content_type: 'context',
          project: 'Rare Word',
        });
      }
      const query = 'what was the problem with the zeppelin on the way up';
      const s = await search({ query, project: 'Rare Word', limit: 5 });
      assert.equal(s.method, 'hybrid');
      const hit = s.results.find((r: { memory_id: string }) => r.memory_id === answer.memory_id);
      assert.ok(hit, 'the answer is in the top 5');
      assert.equal(hit.keyword_rank, 1, 'the keyword branch ranks the rare word first');
      const closer = s.results.filter(
        (r: { vector_rank: number | null }) => (r.vector_rank ?? 99) < (hit.vector_rank ?? 99),
      );
      assert.ok(closer.length >= 3, `the vector branch ranks the fillers nearer (${JSON.stringify(s.results)})`);
      assert.equal(s.results[0].memory_id, answer.memory_id, 'the rare-word hit is first');
      assert.ok(s.results[0].rrf_score > 0.5 && s.results[0].rrf_score <= 1, String(s.results[0].rrf_score));
    });

    test("a word among a memory's keywords counts as three of its occurrences in the content", async () => {
      // "quokka" once in the content and once as a keyword is 1 + 3 = 4 occurrences, between the
      // content-only 3 and 5. The one with 3 is a word shorter (3 distinct words, against 4 and 5), so
      // at a tie of occurrences it would come first: counted as 2 (or 1), the keyword hit falls below it.
      const ids: Record<string, string> = {};
      for (const [name, content, keywords] of [
        ['three', 'Quokka quokka quokka migration plan.', []],
        ['keyword', 'Quokka migration plan for the warehouse.', ['quokka']],
        ['five', 'Quokka quokka quokka quokka quokka migration plan, warehouse dock.', []],
      ] as const) {
        ids[name] = (await store({ content, keywords, content_type: 'context', project: 'Keyword Weight' })).memory_id;
      }
      const s = await search({ query: 'quokka', project: 'Keyword Weight', limit: 3 });
      const rank = (name: string) =>
        s.results.find((r: { memory_id: string }) => r.memory_id === ids[name])?.keyword_rank;
      assert.deepEqual([rank('five'), rank('keyword'), rank('three')], [1, 2, 3], JSON.stringify(s.results));
    });

    test('filters apply before the limit: one decision among 25 code memories', async () => {
      for (let i = 0; i < 25; i++) {
        await store({
          content: `Cache invalidation helper number ${i} for the cache layer.`,
          content_type: 'code',
          project: 'Filters',
        });
      }
      const decision = await store({
        content: 'We decided the cache layer invalidates on write.',
        content_type: 'decision',
        project: 'Filters',
        keywords: ['policy'],
      });
      const s = await search({ query: 'cache layer', project: 'Filters', content_type: 'decision', limit: 3 });
      assert.deepEqual(
        s.results.map((h: any) => h.memory_id),
        [decision.memory_id],
      );
      const byKeyword = await search({ query: 'cache', project: 'Filters', keywords: ['POLICY'], limit: 3 });
      assert.deepEqual(
        byKeyword.results.map((h: any) => h.memory_id),
        [decision.memory_id],
      );
      const all = await search({ query: 'cache layer', project: 'Filters', limit: 50 });
      assert.equal(all.total, 26);

      const future = await search({ query: 'cache layer', project: 'Filters', created_after: '2999-01-01T00:00:00Z' });
      assert.equal(future.total, 0);
      const past = await search({ query: 'cache layer', project: 'Filters', created_before: '2000-01-01T00:00:00Z' });
      assert.equal(past.total, 0);
      const now = await search({
        query: 'cache layer',
        project: 'Filters',
        created_after: '2000-01-01T00:00:00Z',
        limit: 5,
      });
      assert.equal(now.total, 5);
    });

    test('projects are isolated; names match exactly and case-insensitively; an unknown project finds nothing', async () => {
      const a = await store({
        content: 'Kafka topic retention is seven days.',
        content_type: 'learning',
        project: 'Alpha Stream',
      });
      await store({
        content: 'Kafka consumers lag behind at night.',
        content_type: 'error',
        project: 'Alpha Streaming',
      });
      const s = await search({ query: 'kafka', project: 'ALPHA STREAM' });
      assert.deepEqual(
        s.results.map((h: any) => h.memory_id),
        [a.memory_id],
      );
      assert.equal(s.results[0].project, 'Alpha Stream');
      const none = await search({ query: 'kafka', project: 'No Such Project' });
      assert.equal(none.total, 0);
      assert.deepEqual(none.results, []);
      const everywhere = await search({ query: 'kafka' });
      assert.ok(everywhere.total >= 2, 'without a project every project is searched');
    });

    test('storing into an unknown project creates it; without a project it goes to DEFAULT_PROJECT', async () => {
      const s = await store({
        content: 'A memory in a brand new project.',
        content_type: 'context',
        project: 'Brand New Memories',
      });
      assert.equal(s.project, 'Brand New Memories');
      const plans = await api('GET', '/api/v1/plans?limit=500');
      assert.ok(plans.body.plans.some((p: any) => p.title === 'Brand New Memories'));
      const d = await store({ content: 'A memory for the default project.', content_type: 'context' });
      assert.equal(d.project, 'default');
    });

    test('a natural-language question finds memories that lack some of its words', async () => {
      const m = await store({
        content: 'Eviction policy for the session cache is allkeys-lru.',
        content_type: 'decision',
        project: 'Questions',
      });
      // "what", "did", "we" are stop words; "decide" and "about" match nothing: all-words search finds nothing.
      const s = await search({ query: 'what did we decide about the eviction policy?', project: 'Questions' });
      assert.equal(s.results[0]?.memory_id, m.memory_id);
      assert.ok(s.results[0].keyword_rank !== null, 'found by the any-word fallback');
    });

    test('a question of common words only: memories with all of them first; words never found together still find', async () => {
      // 600 memories of one project: "alpha" and "bravo" in 200 each (100 with both), "charlie" in 300
      // and never with "alpha".
      await seedProject(
        'c222222222cc',
        'Crowded',
        600,
        sql`case g % 6 when 0 then 'alpha bravo item ' when 1 then 'alpha item ' when 2 then 'bravo item '
                       else 'charlie item ' end || g`,
      );
      const both = await search({ query: 'alpha bravo', project: 'Crowded', limit: 10 });
      assert.equal(both.results.length, 10);
      for (const hit of both.results)
        assert.match(hit.content, /^alpha bravo item/, 'every word of a crowded question matched first');
      const apart = await search({ query: 'alpha charlie', project: 'Crowded', limit: 10 });
      assert.equal(apart.results.length, 10, 'no memory has both words: each is found alone');
      for (const hit of apart.results) {
        assert.ok(hit.keyword_rank !== null);
        assert.match(hit.content, /^(alpha|charlie) /);
      }
    });

    test('a question of common words only, none with all of them: the pair of its rarest words is fetched first, whatever the heap holds first', async () => {
      // 560 memories of one project, in this order: 400 with "charlie delta", then 160 with "alpha
      // bravo". Every word is in more than 150 of them (a crowded question) and none has all four, so
      // the memories with two of the words are fetched, at most 200: those with the rarer pair first.
      await seedProject(
        'c333333333cc',
        'Paired',
        560,
        sql`case when g <= 400 then 'charlie delta item ' else 'alpha bravo item ' end || g`,
      );
      const s = await search({ query: 'alpha bravo charlie delta', project: 'Paired', limit: 10 });
      assert.equal(s.results.length, 10);
      for (const hit of s.results) {
        assert.ok(hit.keyword_rank !== null);
        assert.match(hit.content, /^alpha bravo item/, 'the rarer pair ranks first, so it must have been fetched');
      }
    });

    test('session context: a hit stored next to other matching memories outranks an equal hit stored among unrelated ones', async () => {
      const contents = [
        'migration rollback steps',
        'database migration plan',
        'migration window is sunday',
        'lunch menu for the offsite',
        'office plants need water',
        'plan database migration',
        'parking rules changed',
        'team offsite agenda',
      ];
      // Without the boost the two hits tie and the smaller id ranks first: store the set again (in
      // a fresh project) until the isolated hit has the smaller id, so only the boost can put the
      // other one first.
      let ids: string[] = [];
      let project = '';
      for (let attempt = 0; attempt < 20 && !(ids[5]! < ids[1]!); attempt++) {
        project = `Neighbours ${attempt}`;
        ids = [];
        for (const content of contents)
          ids.push((await store({ content, content_type: 'context', project })).memory_id);
      }
      assert.ok(ids[5]! < ids[1]!, 'an arrangement where the tie-break favours the isolated hit');
      const s = await search({ query: 'database migration plan', project });
      const rankOf = (id: string) => s.results.find((h: any) => h.memory_id === id)?.keyword_rank;
      assert.equal(rankOf(ids[1]!), 1, 'between two memories about the migration');
      assert.equal(rankOf(ids[5]!), 2, 'the same words, among unrelated memories');
    });

    test("each memory takes the next place in its project's order of storing, after the latest live one", async () => {
      const placesOf = async (ids: string[]) => {
        const rows = await database.db.kysely
          .selectFrom('semantic_memory')
          .select(['id', 'project_seq'])
          .where('id', 'in', ids)
          .execute();
        return ids.map((id) => Number(rows.find((r) => r.id === id)?.project_seq));
      };
      const first = [];
      for (const content of ['places one', 'places two', 'places three'])
        first.push((await store({ content, content_type: 'context', project: 'Places A' })).memory_id);
      const other = (await store({ content: 'places elsewhere', content_type: 'context', project: 'Places B' }))
        .memory_id;
      assert.deepEqual(await placesOf([...first, other]), [1, 2, 3, 1], 'numbered per project, in storing order');
      // Deletes one memory of Places A, then stores another there: the new one's place.
      const placeAfterDeleting = async (id: string, content: string) => {
        assert.equal((await api('DELETE', `/api/v1/memories/${id}`)).status, 200);
        return placesOf([(await store({ content, content_type: 'context', project: 'Places A' })).memory_id]);
      };
      assert.deepEqual(
        await placeAfterDeleting(first[2]!, 'places four'),
        [3],
        'the deleted latest one frees its place',
      );
      assert.deepEqual(
        await placeAfterDeleting(first[0]!, 'places five'),
        [4],
        'a deleted memory before the latest leaves a gap, not a place to fill',
      );
    });

    test('session context: a candidate never gains from itself, and a place shared by several counts once', async () => {
      const project = 'Shared places';
      const ids = [];
      for (const content of ['quasar nebula first', 'quasar nebula second', 'quasar nebula third', 'lunch menu'])
        ids.push((await store({ content, content_type: 'context', project })).memory_id);
      const [a, b, c] = ids as [string, string, string];
      const scoresWith = async (neighbours: number) => {
        const p = {
          query: 'quasar nebula',
          filters: { project },
          limit: 10,
          k: 30,
          weights: { vector: 1, keyword: 1, neighbours },
        };
        const { rows } = await keywordRanksSql(p).execute(database.db.kysely);
        return new Map(rows.map((r) => [r.id, Number(r.score)]));
      };
      // a alone at place 1, b and c sharing place 5: out of each other's reach (more than two places apart).
      await sql`update semantic_memory set project_seq = case id when ${a} then 1 else 5 end where id in (${a}, ${b}, ${c})`.execute(
        database.db.kysely,
      );
      const [plain, boosted] = [await scoresWith(0), await scoresWith(0.4)];
      assert.equal(boosted.get(a), plain.get(a), 'no neighbour within two places: its own score does not count');
      assert.ok(
        Math.abs(boosted.get(b)! - (plain.get(b)! + 0.4 * plain.get(c)!)) < 1e-9,
        'b gains from c at its place',
      );
      // Now a at place 5 too: b gains the best of a and c once, not their sum.
      await sql`update semantic_memory set project_seq = 5 where id = ${a}`.execute(database.db.kysely);
      const shared = await scoresWith(0.4);
      const best = Math.max(plain.get(a)!, plain.get(c)!);
      assert.ok(Math.abs(shared.get(b)! - (plain.get(b)! + 0.4 * best)) < 1e-9, 'one gain per place');
    });

    test('session context: every candidate gains the best other score of each place within two of its own', async () => {
      // The definition, computed here from the plain scores, against the statement on random places:
      // shared places, ties, gaps, two projects, and memories without a place.
      const projects = ['Context oracle A', 'Context oracle B'];
      const ids: string[] = [];
      const contents = [
        'orbit telemetry',
        'orbit telemetry',
        'orbit telemetry drift',
        'orbit orbit telemetry',
        'orbit telemetry report from the ground station',
        'telemetry',
        'orbit',
        'orbit telemetry telemetry',
        'telemetry orbit', // the same score as the first: a tie
        'orbit telemetry and more words around it',
      ];
      for (const [i, content] of contents.entries())
        ids.push((await store({ content, content_type: 'context', project: projects[i % 2] })).memory_id);
      const { kysely } = database.db;
      const scoresWith = async (neighbours: number, project: string) => {
        const { rows } = await keywordRanksSql({
          query: 'orbit telemetry',
          filters: { project },
          limit: 10,
          k: 30,
          weights: { vector: 1, keyword: 1, neighbours },
        }).execute(kysely);
        return new Map(rows.map((r) => [r.id, Number(r.score)]));
      };
      // A 32-bit LCG (Numerical Recipes' constants), exact in Math.imul: the same places on every run.
      let seed = 7;
      const next = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) >>> 16) % 7;
      // What the rounds must have held for the comparisons to mean something.
      let gains = 0;
      let shared = 0;
      for (let round = 0; round < 6; round++) {
        // Places 1–6 (several memories may share one), or none (0: no place).
        const places = new Map(ids.map((id) => [id, next()]));
        for (const [id, place] of places)
          await sql`update semantic_memory set project_seq = ${place === 0 ? null : place} where id = ${id}`.execute(
            kysely,
          );
        for (const project of projects) {
          const [plain, boosted] = [await scoresWith(0, project), await scoresWith(0.4, project)];
          assert.equal(plain.size, contents.length / 2, 'every memory of the project is a candidate');
          for (const [id, score] of plain) {
            const place = places.get(id)!;
            let near = 0;
            for (let at = place - 2; place > 0 && at <= place + 2; at++) {
              const others = [...plain].filter(([other]) => other !== id && at > 0 && places.get(other) === at);
              if (others.length > 0) near += Math.max(...others.map(([, s]) => s));
              if (at === place && others.length > 0) shared++;
            }
            if (near > 0) gains++;
            assert.ok(
              Math.abs(boosted.get(id)! - (score + 0.4 * near)) < 1e-9,
              `round ${round}, ${project}, ${id} at ${place}: ${boosted.get(id)} against ${score} + 0.4 × ${near}`,
            );
          }
        }
      }
      assert.ok(gains >= 10, `candidates gained from neighbours (${gains})`);
      assert.ok(shared >= 2, `candidates shared a place with another (${shared})`);
    });

    test('repeated searches return each memory once and count every access', async () => {
      const m = await store({
        content: 'Grafana dashboards live in the ops repository.',
        content_type: 'documentation',
        project: 'Access',
      });
      for (let i = 0; i < 3; i++) {
        const s = await search({ query: 'grafana dashboards ops repository', project: 'Access' });
        const ids = s.results.map((h: any) => h.memory_id);
        assert.equal(new Set(ids).size, ids.length, 'no duplicate hits');
        assert.deepEqual(ids, [m.memory_id]);
      }
      // Counted in batches (within a second), so a search is never a write that waits.
      const got = await eventually(async () => {
        const r = await api('GET', `/api/v1/memories/${m.memory_id}`);
        return r.body.memory.access_count >= 3 ? r.body.memory : undefined;
      });
      assert.equal(got.access_count, 3);
      assert.ok(got.last_accessed_at);
    });

    test('concurrent searches over the same memories all succeed, and every hit is counted', async () => {
      const stored: Array<{ memory_id: string }> = [];
      for (let i = 0; i < 5; i++) {
        stored.push(
          await store({
            content: `Concurrent lookup target ${i} about the billing service.`,
            content_type: 'context',
            project: 'Concurrent',
          }),
        );
      }
      const answers = await Promise.all(
        Array.from({ length: 24 }, () =>
          api('POST', '/api/v1/memories/search', { query: 'billing service lookup target', project: 'Concurrent' }),
        ),
      );
      for (const a of answers) assert.equal(a.status, 200, JSON.stringify(a.body));
      for (const a of answers) assert.equal(a.body.total, 5);
      await eventually(async () => {
        const counts = await Promise.all(
          stored.map(async (m) => (await api('GET', `/api/v1/memories/${m.memory_id}`)).body.memory.access_count),
        );
        return counts.every((c) => c === 24) ? counts : undefined;
      });
    });

    test('identical content in the same project is stored once; another project gets its own copy', async () => {
      const args = { content: 'Use pnpm workspaces for the monorepo.', content_type: 'decision', project: 'Dedup' };
      const first = await store(args);
      const second = await callTool('devstream_store_memory', { ...args, project: 'dedup', keywords: ['ignored'] });
      assert.equal(second.structuredContent.memory_id, first.memory_id);
      assert.equal(second.structuredContent.duplicate, true);
      assert.deepEqual(second.structuredContent.keywords, [], 'the existing memory, unchanged');
      assert.match(second.text, /♻️ \*\*Duplicate\*\*/);
      const other = await store({ ...args, project: 'Dedup Elsewhere' });
      assert.notEqual(other.memory_id, first.memory_id);
      const s = await search({ query: 'pnpm workspaces monorepo', project: 'Dedup' });
      assert.equal(s.total, 1);
    });

    test('delete erases a memory: 404 afterwards, gone from search, the same content can be stored again', async () => {
      const m = await store({
        content: 'The staging password is hunter2 (oops).',
        content_type: 'context',
        project: 'Deletes',
      });
      // Its vector indexed first (the worker moves it out of its job), so the delete has one to erase.
      const vectors = () =>
        database.db.kysely
          .selectFrom('memory_vectors')
          .select('memory_id')
          .where('memory_id', '=', m.memory_id)
          .execute();
      await eventually(async () => ((await vectors()).length === 1 ? true : undefined));
      const r = await callTool('devstream_delete_memory', { memory_id: m.memory_id });
      assert.equal(r.isError, undefined, r.text);
      assert.deepEqual(r.structuredContent, { success: true, memory_id: m.memory_id });
      assert.match(r.text, /Memory Deleted/);
      const got = await api('GET', `/api/v1/memories/${m.memory_id}`);
      assert.equal(got.status, 404);
      assert.equal(got.body.error.code, 'NOT_FOUND');
      const again = await api('DELETE', `/api/v1/memories/${m.memory_id}`);
      assert.equal(again.status, 404);
      const s = await search({ query: 'staging password hunter2', project: 'Deletes' });
      assert.equal(s.total, 0);
      const row = await database.db.kysely
        .selectFrom('semantic_memory')
        .select(['content', 'content_hash', 'embedding_model', 'archived_at'])
        .where('id', '=', m.memory_id)
        .executeTakeFirstOrThrow();
      assert.equal(row.content, '', 'the secret is erased, not just hidden');
      assert.equal(row.content_hash, '');
      assert.equal(row.embedding_model, null);
      assert.deepEqual(await vectors(), [], 'its vector is gone');
      assert.ok(row.archived_at);
      // The keyword statistics forget the deleted words, before and after their deltas are folded.
      const counts = async () => {
        const df = await database.db.kysely
          .selectFrom('memory_lexeme_df')
          .select(['lexeme', 'df'])
          .where('lexeme', 'in', ['hunter2', 'stage'])
          .execute();
        const delta = await database.db.kysely
          .selectFrom('memory_lexeme_delta')
          .select(['lexeme', 'delta as df'])
          .where('lexeme', 'in', ['hunter2', 'stage'])
          .execute();
        const sums: Record<string, number> = {};
        for (const r of [...df, ...delta]) sums[r.lexeme] = (sums[r.lexeme] ?? 0) + Number(r.df);
        return { sums, deltas: delta.length, rows: df.length };
      };
      // (The service folds every 2 s: the deltas may already be folded, and the zero counts gone.)
      const pending = (await counts()).sums;
      assert.ok(
        Object.values(pending).every((n) => n === 0),
        `no count left for the deleted words: ${JSON.stringify(pending)}`,
      );
      await compactKeywordStats(database.db.kysely);
      assert.deepEqual(await counts(), { sums: {}, deltas: 0, rows: 0 }, 'folded, and zero counts dropped');
      const restored = await store({
        content: 'The staging password is hunter2 (oops).',
        content_type: 'context',
        project: 'Deletes',
      });
      assert.notEqual(restored.memory_id, m.memory_id);
      assert.equal(restored.duplicate, false);
    });

    test('task notes become a decision memory of the task, searchable and embedded', async () => {
      const created = await api(
        'POST',
        '/api/v1/tasks',
        taskInput({ title: 'Pick a queue', task_type: 'research', phase_name: 'Infra', project: 'Notes Project' }),
      );
      const taskId = created.body.task.id;
      const updated = await callTool('devstream_update_task', {
        task_id: taskId,
        status: 'completed',
        notes: 'Chose NATS JetStream over RabbitMQ for fan-out.',
      });
      const memoryId = updated.structuredContent.memory_id;
      assert.match(memoryId, /^[0-9a-f]{12}$/);
      assert.match(updated.text, new RegExp(`🧠 \\*\\*Memory ID\\*\\*: \`${memoryId}\``));
      const s = await search({ query: 'NATS JetStream', project: 'notes project', content_type: 'decision' });
      assert.equal(s.results[0]?.memory_id, memoryId);
      assert.equal(
        s.results[0].content,
        'Task status update: completed. Notes: Chose NATS JetStream over RabbitMQ for fan-out.',
      );
      const embedded = await eventually(async () => {
        const got = await api('GET', `/api/v1/memories/${memoryId}`);
        return got.body.memory.embedding_dimensions === 768 ? got.body.memory : undefined;
      });
      assert.equal(embedded.task_id, taskId);
      assert.equal(embedded.importance_score, 0.7);
      assert.equal(embedded.project, 'Notes Project');
      // The same notes on the same status again: the update happens, the memory is the one stored before.
      const again = await callTool('devstream_update_task', {
        task_id: taskId,
        status: 'completed',
        notes: 'Chose NATS JetStream over RabbitMQ for fan-out.',
      });
      assert.equal(again.isError, undefined, again.text);
      assert.equal(again.structuredContent.memory_id, memoryId);
      assert.equal(again.structuredContent.previous_status, 'completed');
      const history = await database.db.kysely
        .selectFrom('task_status_history')
        .select(['to_status', 'notes'])
        .where('task_id', '=', taskId)
        .execute();
      assert.equal(history.filter((h) => h.notes?.startsWith('Chose NATS')).length, 2, 'both updates recorded');
    });

    test('bad input is a VALIDATION_ERROR naming the field, over REST and MCP', async () => {
      const cases: Array<[string, string, Record<string, unknown>, string]> = [
        ['POST', '/api/v1/memories', { content: '   ', content_type: 'code' }, 'content'],
        ['POST', '/api/v1/memories', { content: 'x', content_type: 'note' }, 'content_type'],
        ['POST', '/api/v1/memories', { content: 'x', content_type: 'code', keywords: [1] }, 'keywords.0'],
        ['POST', '/api/v1/memories', { content: 'x', content_type: 'code', keywords: 'a,b' }, 'keywords'],
        ['POST', '/api/v1/memories', { content: 'nul\u0000byte', content_type: 'code' }, 'content'],
        ['POST', '/api/v1/memories', { content: 'x', content_type: 'code', color: 'red' }, 'color'],
        ['POST', '/api/v1/memories/search', { query: 'q', limit: 0 }, 'limit'],
        ['POST', '/api/v1/memories/search', { query: 'q', limit: 51 }, 'limit'],
        ['POST', '/api/v1/memories/search', { query: '' }, 'query'],
        ['POST', '/api/v1/memories/search', { query: 'q', content_type: 'notes' }, 'content_type'],
        ['POST', '/api/v1/memories/search', { query: 'q', created_after: 'yesterday' }, 'created_after'],
        ['GET', '/api/v1/memories/not-an-id', undefined as never, 'memory_id'],
      ];
      for (const [method, path, body, field] of cases) {
        const r = await api(method, path, body);
        assert.equal(r.status, 400, `${path} ${JSON.stringify(body)} → ${JSON.stringify(r.body)}`);
        assert.equal(r.body.error.code, 'VALIDATION_ERROR');
        assert.ok(
          r.body.error.details.issues.some((i: any) => i.field === field),
          `${JSON.stringify(body)} names ${field}: ${JSON.stringify(r.body.error.details)}`,
        );
      }
      const mcpBad = await callTool('devstream_search_memory', { query: 'q', limit: 99 });
      assert.equal(mcpBad.isError, true);
      assert.match(mcpBad.text, /^❌ Error searching memory: VALIDATION_ERROR: limit:/);
    });

    test('punctuation, quotes and operators in a query are words, never errors', async () => {
      for (const query of [
        "it's a \\ test & more | !",
        '"unclosed',
        'a:b:c',
        '-',
        '***',
        'the of and',
        "o'reilly's (book)",
      ]) {
        const s = await search({ query });
        assert.ok(Array.isArray(s.results), query);
      }
    });

    test('a search scans only the newest staged vectors it is given (PGlite scans fewer): older ones wait for the index', async () => {
      const { kysely } = database.db;
      await sql`insert into intervention_plans (id, title, expected_outcome) values ('b333333333bb', 'Staging bound', 'none')`.execute(
        kysely,
      );
      // Three memories whose vectors are still staged in their jobs, the needle's the oldest. Dated
      // ahead of any other staged vector: the bound counts the whole store's newest, and the jobs of
      // the tests before may still be staged (the worker moves them when it gets to them).
      const staged = [
        ['a00000000001', 'needle', '2999-01-01T00:00:01Z'],
        ['a00000000002', 'haystack one', '2999-01-01T00:00:02Z'],
        ['a00000000003', 'haystack two', '2999-01-01T00:00:03Z'],
      ] as const;
      for (const [id, text, at] of staged) {
        await sql`insert into semantic_memory (id, project_id, content, content_type, content_format, importance_score, content_hash, embedding_model, embedding_dims)
                  values (${id}, 'b333333333bb', ${`qqstage ${id}`}, 'context', 'text', 0.5, ${id}, 'nomic-embed-text', 768)`.execute(
          kysely,
        );
        await sql`insert into embedding_jobs (memory_id, embedding, created_at)
                  values (${id}, ${vectorLiteral(FakeOllama.vector(text))}::halfvec, ${at}::timestamptz)`.execute(
          kysely,
        );
      }
      const vectorHits = async (scanned: number) => {
        const vector = { values: FakeOllama.vector('needle'), model: 'nomic-embed-text', dims: 768 };
        const { rows } = await vectorRanksSql(
          {
            query: 'zzunmatched',
            filters: { project: 'Staging bound' },
            limit: 10,
            k: 30,
            weights: { vector: 1, keyword: 1, neighbours: 0.4 },
            vector,
            staged: scanned,
          },
          vector,
        ).execute(kysely);
        return rows.map((r) => [r.id, Number(r.r)]);
      };
      assert.deepEqual((await vectorHits(3))[0], ['a00000000001', 1], 'all three scanned: the needle first');
      assert.deepEqual(
        (await vectorHits(2)).map(([id]) => id).sort(),
        ['a00000000002', 'a00000000003'],
        'the newest two only: the needle waits for the index',
      );
      await sql`delete from semantic_memory where project_id = 'b333333333bb'`.execute(kysely);
    });

    test('the search the service runs (both branches side by side, fused here) equals the one-statement search', async () => {
      const { kysely } = database.db;
      for (const [content, content_type] of [
        ['Retry policy for the billing webhook: three attempts, then the dead-letter queue.', 'context'],
        ['The billing webhook retries with exponential backoff.', 'decision'],
        ['Dead-letter queue alerts page the on-call engineer.', 'context'],
      ])
        await store({ content, content_type, project: 'Fusion Check' });
      const weights = { vector: 0.15, keyword: 1, neighbours: 0.4 };
      const cases: Array<{
        query: string;
        filters: SearchFilters;
        limit: number;
        vector: boolean;
        weights?: typeof weights;
      }> = [
        { query: 'billing webhook retry policy', filters: {}, limit: 10, vector: true },
        { query: 'billing webhook retry policy', filters: { project: 'Fusion Check' }, limit: 2, vector: true },
        {
          query: 'dead-letter queue',
          filters: { project: 'fusion check', content_type: 'context' },
          limit: 10,
          vector: true,
        },
        // One memory in scope: each branch has at most one candidate (its best is its floor).
        {
          query: 'billing webhook backoff',
          filters: { project: 'Fusion Check', content_type: 'decision' },
          limit: 10,
          vector: true,
        },
        // 150 candidates a branch: many vector-only hits score 0 and are ordered by id.
        { query: 'what did we decide about the API layer', filters: {}, limit: 50, vector: true },
        { query: 'billing webhook retry policy', filters: {}, limit: 10, vector: false },
        {
          query: 'billing webhook retry policy',
          filters: {},
          limit: 10,
          vector: true,
          weights: { ...weights, vector: 0 },
        },
        {
          query: 'billing webhook retry policy',
          filters: {},
          limit: 10,
          vector: true,
          weights: { ...weights, keyword: 0 },
        },
        { query: 'zzz nothing matches this', filters: {}, limit: 10, vector: true },
      ];
      for (const c of cases) {
        const vector = c.vector
          ? { values: FakeOllama.vector(c.query), model: 'nomic-embed-text', dims: 768 }
          : undefined;
        const params = {
          query: c.query,
          filters: c.filters,
          limit: c.limit,
          k: candidatesFor(c.limit),
          weights: c.weights ?? weights,
        };
        const split = await searchMemories(kysely, params, Promise.resolve(vector));
        const { rows } = await hybridSearchSql({ ...params, vector }).execute(kysely);
        const one = rows.map((r) => ({
          ...r,
          rrf_score: Number(r.rrf_score),
          vector_rank: r.vector_rank === null ? null : Number(r.vector_rank),
          keyword_rank: r.keyword_rank === null ? null : Number(r.keyword_rank),
          distance: r.distance === null ? null : Number(r.distance),
        }));
        const label = `${c.query} ${JSON.stringify(c.filters)} limit ${c.limit}${c.vector ? '' : ', keyword only'}`;
        assert.ok(c.query.startsWith('zzz') || one.length > 0, `${label}: the case finds something`);
        // Scores agree to rounding: a sum over rows in another order (another plan) may differ in its last bit.
        const near = (a: number | null, b: number | null) =>
          a === null || b === null ? a === b : Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(b));
        assert.equal(split.length, one.length, label);
        // Access counts left out: an earlier test's searches may be counted between the two reads.
        split.forEach((hit, i) => {
          const { rrf_score, distance, access_count: _a, last_accessed_at: _l, ...rest } = hit;
          const {
            rrf_score: oneScore,
            distance: oneDistance,
            access_count: _b,
            last_accessed_at: _m,
            ...oneRest
          } = one[i]!;
          assert.deepEqual(rest, oneRest, `${label}: hit ${i + 1}`);
          assert.ok(
            near(rrf_score, oneScore) && near(distance, oneDistance),
            `${label}: hit ${i + 1} scores ${rrf_score} / ${oneScore}`,
          );
        });
      }
    });

    // Last: it adds 1,200 memories that every unscoped search would see.
    test('a large scope takes the HNSW-ordered branch, filters applied in it; a small project is scanned exactly', async () => {
      const { kysely } = database.db;
      // Which way the vector branch went: EXPLAIN ANALYZE of the statement the service runs.
      const vectorScan = async (filters: SearchFilters) => {
        const vector = { values: FakeOllama.vector('crash'), model: 'nomic-embed-text', dims: 768 };
        const compiled = vectorRanksSql(
          { query: 'crash', filters, limit: 10, k: 30, weights: { vector: 1, keyword: 1, neighbours: 0.4 }, vector },
          vector,
        ).compile(kysely);
        const r = await kysely.executeQuery(
          CompiledQuery.raw(`explain (analyze, format json) ${compiled.sql}`, [...compiled.parameters]),
        );
        const cell = (r.rows[0] as Record<string, unknown>)['QUERY PLAN'];
        const find = (n: any): any => (n['Subplan Name'] === 'CTE vec' ? n : (n.Plans ?? []).map(find).find(Boolean));
        const scanned = (n: any): boolean =>
          (n['Relation Name'] === 'memory_vectors' && n['Actual Loops'] > 0) || (n.Plans ?? []).some(scanned);
        const scanOf = (n: any): any =>
          n['Relation Name'] === 'memory_vectors' ? n : (n.Plans ?? []).map(scanOf).find(Boolean);
        const vec = find((typeof cell === 'string' ? JSON.parse(cell) : cell)[0].Plan);
        // Its Append: the exact branch first, then the one ordered by the HNSW index (one of them runs).
        const [exact, index] = vec['Node Type'] === 'Append' ? vec.Plans : vec.Plans[0].Plans;
        const exactScan = scanOf(exact);
        return {
          plan: (typeof cell === 'string' ? JSON.parse(cell) : cell)[0].Plan,
          exact: scanned(exact),
          index: scanned(index),
          exactReads:
            `${exactScan['Node Type']} of ${exactScan['Index Name'] ?? 'the table'}` +
            (/project_id/.test(exactScan['Index Cond'] ?? '') ? ', the project its index condition' : ''),
        };
      };
      const way = async (filters: SearchFilters) => {
        const { exact, index } = await vectorScan(filters);
        return { exact, index };
      };
      // The counts a date range's scope took (vec_scope): which side of the range each counted, and whether it ran.
      const dateCounts = async (filters: SearchFilters) => {
        const { plan } = await vectorScan(filters);
        const counts: string[] = [];
        const walk = (n: any) => {
          // The counts read semantic_memory as d (d_1, …), by the created_at index or the table.
          if (n['Relation Name'] === 'semantic_memory' && /^d(_\d+)?$/.test(n.Alias))
            counts.push(
              `${/created_at >=/.test(n['Index Cond'] ?? n.Filter) ? 'from' : 'before'} ${n['Actual Loops'] > 0 ? 'ran' : 'skipped'}`,
            );
          (n.Plans ?? []).forEach(walk);
        };
        walk(plan);
        return counts.sort();
      };
      // Filler memories (no vectors: only the count matters), written straight to the table; the trigger counts them.
      await sql`insert into intervention_plans (id, title, expected_outcome) values ('f111111111ff', 'Filler', 'none')`.execute(
        kysely,
      );
      await sql`
        insert into semantic_memory (id, project_id, content, content_type, content_format, importance_score, content_hash)
        select 'e' || lpad(to_hex(g), 11, '0'), 'f111111111ff', 'zzfiller ' || g, 'context', 'text', 0.5, md5(g::text)
          from generate_series(1, 1200) g`.execute(kysely);
      await compactKeywordStats(kysely);
      await new Promise((resolve) => setTimeout(resolve, 5));
      const since = new Date().toISOString(); // after every filler, before the two memories below
      await new Promise((resolve) => setTimeout(resolve, 5));
      const outage = await store({
        content: 'Loading dock outage report for each visitor.',
        content_type: 'learning',
        project: 'Large Scope',
        keywords: ['dock'],
      });
      await store({ content: 'Loading dock rules for trucks.', content_type: 'context', project: 'Large Scope' });

      const all = await search({ query: 'crash' });
      assert.equal(all.results[0].memory_id, outage.memory_id, 'found by vector alone');
      assert.equal(all.results[0].vector_rank, 1);
      assert.equal(all.results[0].keyword_rank, null);
      assert.deepEqual(await way({}), { index: true, exact: false }, 'all 1,200+ memories: the indexed branch');
      const typed = await search({ query: 'crash', content_type: 'learning', limit: 50 });
      assert.ok(
        typed.results.every((h: any) => h.content_type === 'learning'),
        'the filter holds inside the index scan',
      );
      assert.equal(typed.results.find((h: any) => h.vector_rank === 1)?.memory_id, outage.memory_id);
      assert.deepEqual(
        await way({ content_type: 'learning' }),
        { index: true, exact: false },
        'a type filter does not shrink the known scope',
      );
      // A keyword filter inside the index scan, on the vector moved into memory_vectors (not the staged one).
      await eventually(async () => {
        const moved = await kysely
          .selectFrom('memory_vectors')
          .select('memory_id')
          .where('memory_id', '=', outage.memory_id)
          .executeTakeFirst();
        return moved ? true : undefined;
      });
      const tagged = await search({ query: 'crash', keywords: ['dock'] });
      assert.deepEqual(
        tagged.results.map((h: any) => [h.memory_id, h.vector_rank]),
        [[outage.memory_id, 1]],
      );
      assert.equal((await search({ query: 'crash', keywords: ['nosuchword'] })).total, 0);
      assert.deepEqual(await way({ keywords: ['dock'] }), { index: true, exact: false });

      const scoped = await search({ query: 'crash', project: 'Large Scope' });
      assert.equal(scoped.results[0].memory_id, outage.memory_id);
      assert.equal(scoped.results.length, 2, 'both memories of the small project, by exact distance');
      // From the covering index alone (migrations/0020, 0021), not through another index on the project with a heap fetch a row.
      const { plan: _plan, ...scopedScan } = await vectorScan({ project: 'Large Scope' });
      assert.deepEqual(
        scopedScan,
        {
          index: false,
          exact: true,
          exactReads: 'Index Only Scan of idx_memory_vectors_scope_768, the project its index condition',
        },
        'a small project: scanned exactly',
      );

      const recent = await search({ query: 'crash', created_after: since });
      assert.equal(recent.results.length, 2, 'only the two memories stored since');
      assert.equal(recent.results[0].memory_id, outage.memory_id);
      assert.equal(recent.results[0].vector_rank, 1);
      assert.deepEqual(
        await way({ created_after: since }),
        { index: false, exact: true },
        'a date range holding few memories: scanned exactly',
      );
      assert.deepEqual(
        await dateCounts({ created_after: since }),
        ['before ran', 'from ran'],
        'the 1,200 memories before it are too many to take from all: the range itself is counted',
      );
      // A range that leaves out few memories is sized from those (none here), not by counting ~1,100 inside it.
      const wide = await search({ query: 'crash', created_after: '2000-01-01T00:00:00Z', limit: 3 });
      assert.equal(wide.results[0].memory_id, outage.memory_id);
      assert.deepEqual(await way({ created_after: '2000-01-01T00:00:00Z' }), { index: true, exact: false });
      assert.deepEqual(await dateCounts({ created_after: '2000-01-01T00:00:00Z' }), ['before ran', 'from skipped']);
      assert.deepEqual(await dateCounts({ created_before: '2999-01-01T00:00:00Z' }), ['before skipped', 'from ran']);
      assert.deepEqual(
        await dateCounts({ created_after: '2000-01-01T00:00:00Z', created_before: '2999-01-01T00:00:00Z' }),
        ['from ran'],
        'a range closed on both sides is counted inside',
      );
    });
  });
}

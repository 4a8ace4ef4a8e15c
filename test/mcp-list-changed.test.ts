/**
 * A graph uploaded through one instance changes the resource list of MCP clients connected to
 * another (the change bus, Postgres LISTEN/NOTIFY), in both protocol eras: a 2026-07-28 client's
 * `subscriptions/listen` stream and a 2025 client's session stream hear
 * `notifications/resources/list_changed`.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { backends } from './helpers/backends.js';
import { bearer } from './helpers/bearer.js';
import { wrenText } from './helpers/graph-fixture.js';
import { createKey } from './helpers/keys.js';
import { nextResourceNotification } from './helpers/mcp-notifications.js';
import { connectMcp, rest } from './helpers/server.js';
import { taskInput } from './helpers/task-input.js';
import { twoInstances } from './helpers/two-instances.js';

const ADMIN = 'test-admin-token-0123456789abcdefghijklmnop';
for (const backend of backends) {
  describe(`resource list changes reach MCP clients of other instances (${backend.name})`, () => {
    test('a graph uploaded on A: B’s 2026 listen stream and B’s 2025 session both hear resources/list_changed', async () => {
      const { a, b, close } = await twoInstances(backend, ADMIN);
      const clients: Client[] = [];
      try {
        const token = await createKey(a.url, ADMIN, 'lister', ['read', 'write']);
        const connect = async (era: 'legacy' | 'modern') => {
          const { client } = await connectMcp(b.url, '/mcp', bearer(token), { era, name: era });
          clients.push(client);
          return client;
        };

        const modern = await connect('modern');
        const modernHeard = nextResourceNotification(modern, 'notifications/resources/list_changed', 'the 2026 client');
        const subscription = await modern.listen({ resourcesListChanged: true });
        assert.equal(subscription.honoredFilter.resourcesListChanged, true, 'the server offers resource list changes');

        const legacy = await connect('legacy');
        assert.equal(legacy.getServerCapabilities()?.resources?.listChanged, true);
        const legacyHeard = nextResourceNotification(legacy, 'notifications/resources/list_changed', 'the 2025 client');
        // The session's GET stream carries what the server sends outside a request.
        await new Promise((resolve) => setTimeout(resolve, 200));

        const uploaded = await fetch(`${a.url}/api/v1/graphs?repo=wren&branch=main`, {
          method: 'POST',
          body: wrenText,
          headers: { 'content-type': 'application/json', ...bearer(token) },
        });
        assert.equal(uploaded.status, 201, await uploaded.text());
        await Promise.all([modernHeard, legacyHeard]);
        const listed = await modern.listResources();
        assert.ok(listed.resources.some((r) => r.name === 'wren meta'));
        await subscription.close();
      } finally {
        await Promise.allSettled(clients.map((c) => c.close()));
        await close();
      }
    });

    test('a task changed on A: B’s clients subscribed to devstream://task/{id} hear resources/updated (both eras); others do not', async () => {
      const { a, b, close } = await twoInstances(backend, ADMIN);
      const clients: Client[] = [];
      try {
        const token = await createKey(a.url, ADMIN, 'subscriber', ['read', 'write']);
        const made = await rest(
          a.url,
          'POST',
          '/api/v1/tasks',
          taskInput({ title: 'watched', project: 'Subs' }),
          bearer(token),
        );
        assert.equal(made.status, 201, JSON.stringify(made.body));
        const other = await rest(
          a.url,
          'POST',
          '/api/v1/tasks',
          taskInput({ title: 'unwatched', project: 'Subs' }),
          bearer(token),
        );
        const uri = `devstream://task/${made.body.task.id}`;
        const connect = async (era: 'legacy' | 'modern') => {
          const { client } = await connectMcp(b.url, '/mcp', bearer(token), { era, name: era });
          clients.push(client);
          return client;
        };

        const modern = await connect('modern');
        const read = await modern.readResource({ uri });
        assert.equal(JSON.parse((read.contents[0] as { text: string }).text).title, 'watched');
        await assert.rejects(modern.readResource({ uri: 'devstream://task/000000000000' }), /Resource not found/);
        const modernHeard = nextResourceNotification(modern, 'notifications/resources/updated', 'the 2026 client');
        const subscription = await modern.listen({ resourceSubscriptions: [uri] });
        assert.deepEqual(subscription.honoredFilter.resourceSubscriptions, [uri]);

        const legacy = await connect('legacy');
        assert.equal(legacy.getServerCapabilities()?.resources?.subscribe, true);
        await legacy.subscribeResource({ uri });
        const legacyHeard = nextResourceNotification(legacy, 'notifications/resources/updated', 'the 2025 client');
        await new Promise((resolve) => setTimeout(resolve, 200)); // the session's GET stream opens

        // A change to the other task is heard by neither; the watched one's by both.
        const otherChanged = await rest(
          a.url,
          'PATCH',
          `/api/v1/tasks/${other.body.task.id}`,
          { status: 'active' },
          bearer(token),
        );
        assert.equal(otherChanged.status, 200);
        const changed = await rest(
          a.url,
          'PATCH',
          `/api/v1/tasks/${made.body.task.id}`,
          { status: 'active' },
          bearer(token),
        );
        assert.equal(changed.status, 200, JSON.stringify(changed.body));
        assert.deepEqual(await Promise.all([modernHeard, legacyHeard]), [uri, uri]);
        await subscription.close();
      } finally {
        await Promise.allSettled(clients.map((c) => c.close()));
        await close();
      }
    });
  });
}

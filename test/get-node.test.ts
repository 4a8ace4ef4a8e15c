import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { backends } from './helpers/backends.js';
import { rest, withServer, type TestServer } from './helpers/server.js';

// Issue 18, defect 6: get_node (and impact) answered a name no node has with the nearest search hit.

const HTML_RENDER = 'src/render/html.ts::render';
const TEXT_RENDER = 'src/render/text.ts::render';
const VIEW_RENDER = 'src/render/view.ts::View.render';
const FORMAT = 'src/util/strings.ts::formatMessage';
const PAD = 'src/util/strings.ts::pad';

const node = (id: string, type: string, startLine: number, score: number | null, rawCode: string) => {
  const filePath = id.startsWith('file::') ? id.slice('file::'.length) : id.split('::')[0]!;
  const name = id.startsWith('file::') ? filePath.split('/').pop()! : id.split('::')[1]!;
  return { id, name, type, filePath, startLine, endLine: startLine + 2, rawCode, score, metadata: {} };
};

/** Two functions named render (the later id scored higher), a method of that name, a function with an overload, a file. */
const graph = {
  commitHash: 'names-1',
  analyzedAt: '2025-01-01T00:00:00.000Z',
  nodes: [
    node(HTML_RENDER, 'FUNCTION', 1, 2, 'function render(doc) { return formatMessage(doc.title); }'),
    node(TEXT_RENDER, 'FUNCTION', 1, 9.5, 'function render(doc) { return doc.body; }'),
    node(VIEW_RENDER, 'METHOD', 10, 5, 'render() { return render(this.doc); }'),
    node(FORMAT, 'FUNCTION', 1, 7.300000000000001, 'function formatMessage(text) { return pad(text, 2); }'),
    node(PAD, 'FUNCTION', 10, 1, 'function pad(text: string, n: number): string;'),
    node(PAD, 'FUNCTION', 11, 1, 'function pad(text, n) { return text.padStart(n); }'),
    node('file::src/util/strings.ts', 'FILE', 1, 3, ''),
  ],
  edges: [
    { from: HTML_RENDER, to: FORMAT, type: 'CALLS' },
    { from: FORMAT, to: PAD, type: 'CALLS' },
    { from: VIEW_RENDER, to: TEXT_RENDER, type: 'CALLS' },
  ],
};

type ToolResult = { isError?: boolean; content: Array<{ type: string; text: string }>; structuredContent?: any };

for (const backend of backends) {
  describe(`get_node and impact locate only what exists (${backend.name})`, () => {
    let server: TestServer;
    let client: Client;
    withServer(backend, (s) => ({ server, client } = s));

    const call = async (name: string, args: Record<string, unknown>) => {
      const r = (await client.callTool({ name, arguments: args })) as ToolResult;
      return { ...r, text: r.content.map((c) => c.text).join('\n') };
    };
    /** The suggestions of a NOT_FOUND, over REST (MCP carries them in the text). */
    const restMiss = async (nodeArg: string) => {
      const byPath = await rest(server.url, 'GET', `/api/v1/nodes/${encodeURIComponent(nodeArg)}`);
      const byTool = await rest(server.url, 'POST', '/api/v1/tools/get_node', { node: nodeArg });
      for (const r of [byPath, byTool]) {
        assert.equal(r.status, 404, JSON.stringify(r.body));
        assert.equal(r.body.error.code, 'NOT_FOUND');
        assert.equal(r.body.error.details.node, nodeArg);
        assert.ok(Array.isArray(r.body.error.details.suggestions), 'details.suggestions is a list');
      }
      assert.deepEqual(byPath.body, byTool.body, 'the route and the tool mirror answer alike');
      return byPath.body.error as { message: string; details: { suggestions: string[] } };
    };

    test('the graph uploads', async () => {
      const r = await rest(server.url, 'POST', '/api/v1/graphs?repo=names', graph);
      assert.equal(r.status, 201, JSON.stringify(r.body));
    });

    test('a name no node has is NOT_FOUND with the closest symbols as suggestions, never answered by one', async () => {
      // A misspelt name: the search finds formatMessage, and offers it instead of answering with it.
      const typo = await call('get_node', { node: 'formatMesage' });
      assert.equal(typo.isError, true, typo.text);
      assert.equal(typo.structuredContent, undefined);
      assert.match(
        typo.text,
        /^❌ Error getting node: NOT_FOUND: node: no node "formatMesage" in names @ names-1: not found; did you mean .*src\/util\/strings\.ts::formatMessage/,
      );
      const viaRest = await restMiss('formatMesage');
      assert.ok(viaRest.details.suggestions.includes(FORMAT), JSON.stringify(viaRest));
      assert.match(viaRest.message, /not found; did you mean /);

      const madeUp = await call('get_node', { node: 'totallyMadeUpFunction' });
      assert.equal(madeUp.isError, true, madeUp.text);
      assert.match(madeUp.text, /NOT_FOUND: node: no node "totallyMadeUpFunction" in names @ names-1: not found; /);
      const madeUpRest = await restMiss('totallyMadeUpFunction');
      for (const id of madeUpRest.details.suggestions)
        assert.ok(
          graph.nodes.some((n) => n.id === id),
          `${id} is a node of the graph`,
        );
    });

    test('an id-shaped string that is no node id is NOT_FOUND, not the file it names', async () => {
      const r = await call('get_node', { node: 'src/util/strings.ts::bar' });
      assert.equal(r.isError, true, r.text);
      assert.match(r.text, /NOT_FOUND: node: no node "src\/util\/strings\.ts::bar" in names @ names-1: not found; /);
      await restMiss('src/util/strings.ts::bar');
      // The ids themselves still answer.
      const file = await call('get_node', { node: 'file::src/util/strings.ts' });
      assert.equal(file.structuredContent.located, 'id');
      assert.equal(file.structuredContent.node.type, 'FILE');
    });

    test('an exact name in any case locates its node', async () => {
      for (const nodeArg of ['formatMessage', 'FORMATMESSAGE', 'formatmessage']) {
        const r = await call('get_node', { node: nodeArg });
        assert.equal(r.isError, undefined, r.text);
        assert.equal(r.structuredContent.located, 'name');
        assert.equal(r.structuredContent.node.nodeId, FORMAT);
        assert.deepEqual(r.structuredContent.alternatives, []);
      }
      const viaRest = await rest(server.url, 'GET', '/api/v1/nodes/FormatMessage?include=callees');
      assert.equal(viaRest.status, 200, JSON.stringify(viaRest.body));
      assert.equal(viaRest.body.node.nodeId, FORMAT);
      assert.deepEqual(
        viaRest.body.callees.map((c: any) => c.nodeId),
        [PAD],
      );
      // A method by its own name and by its class-qualified one.
      assert.equal((await call('get_node', { node: 'view.RENDER' })).structuredContent.node.nodeId, VIEW_RENDER);
    });

    test('a repeated name answers the best scored node and lists the others as alternatives', async () => {
      const r = await call('get_node', { node: 'render' });
      assert.equal(r.isError, undefined, r.text);
      assert.equal(r.structuredContent.located, 'name');
      assert.equal(r.structuredContent.node.nodeId, TEXT_RENDER, 'score 9.5, though its id sorts after html.ts');
      assert.deepEqual(r.structuredContent.alternatives, [VIEW_RENDER, HTML_RENDER], 'best scored first: 5, then 2');
      assert.match(r.text, /Located by name; also: src\/render\/view\.ts::View\.render, src\/render\/html\.ts::render/);
      const viaTool = await rest(server.url, 'POST', '/api/v1/tools/get_node', {
        node: 'Render',
        include: ['metadata'],
      });
      assert.equal(viaTool.status, 200, JSON.stringify(viaTool.body));
      assert.equal(viaTool.body.node.nodeId, TEXT_RENDER);
      assert.deepEqual(viaTool.body.alternatives, [VIEW_RENDER, HTML_RENDER]);
    });

    test('<id>#<k> answers only a copy the id has', async () => {
      const second = (await call('get_node', { node: `${PAD}#2` })).structuredContent;
      assert.deepEqual([second.node.copy, second.node.copies, second.node.startLine], [2, 2, 11]);
      for (const k of [0, 3]) {
        const r = await call('get_node', { node: `${PAD}#${k}` });
        assert.equal(r.isError, true, r.text);
        assert.match(
          r.text,
          new RegExp(
            `NOT_FOUND: node: no node "src/util/strings\\.ts::pad#${k}" .*did you mean src/util/strings\\.ts::pad#1, src/util/strings\\.ts::pad#2\\?`,
          ),
        );
        assert.deepEqual((await restMiss(`${PAD}#${k}`)).details.suggestions, [`${PAD}#1`, `${PAD}#2`]);
      }
    });

    test("impact's target: a name is located the same way; a name no node has is NOT_FOUND with suggestions", async () => {
      const up = await call('impact', { target: 'render', direction: 'upstream', radius: 1 });
      assert.equal(up.isError, undefined, up.text);
      assert.equal(up.structuredContent.target.nodeId, TEXT_RENDER, 'the best scored render');
      assert.deepEqual(
        up.structuredContent.dependents.map((d: any) => d.nodeId),
        [VIEW_RENDER],
      );

      const typo = await call('impact', { target: 'formatMesage' });
      assert.equal(typo.isError, true, typo.text);
      assert.match(
        typo.text,
        /NOT_FOUND: target: no node "formatMesage" in names @ names-1: not found; did you mean .*src\/util\/strings\.ts::formatMessage/,
      );
      const viaRest = await rest(server.url, 'POST', '/api/v1/tools/impact', { target: 'src/util/strings.ts::bar' });
      assert.equal(viaRest.status, 404, JSON.stringify(viaRest.body));
      assert.equal(viaRest.body.error.code, 'NOT_FOUND');
      assert.equal(viaRest.body.error.details.target, 'src/util/strings.ts::bar');
      assert.ok(Array.isArray(viaRest.body.error.details.suggestions));
    });
  });
}

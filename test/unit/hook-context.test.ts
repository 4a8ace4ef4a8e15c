import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CLAUDE_CODE_CONTEXT_CAP, ContextBudget } from '../../src/domain/hooks/context-budget.js';
import { folderName } from '../../src/domain/hooks/hook-scope.js';
import { identifiersIn } from '../../src/domain/hooks/prompt-context.js';
import { patternWords, repoPath } from '../../src/domain/hooks/tool-context.js';

describe('hook context budget', () => {
  it('keeps whole lines within tokens × 4 characters, the intro counted', () => {
    const budget = new ContextBudget(25, 'Intro:');
    budget.heading('Section:');
    assert.ok(budget.add('a'.repeat(40)));
    assert.ok(!budget.add('b'.repeat(60)), 'too long for what is left');
    assert.ok(budget.add('c'.repeat(30)), 'a shorter line still fits');
    const text = budget.text();
    assert.equal(text, `Intro:\nSection:\n${'a'.repeat(40)}\n${'c'.repeat(30)}`);
    assert.ok(text.length <= 100);
  });

  it('never passes Claude Code’s 10,000-character cap, whatever the tokens', () => {
    const budget = new ContextBudget(1_000_000, 'Intro:');
    for (let i = 0; i < 100; i++) budget.add(`${i} ${'x'.repeat(500)}`);
    assert.ok(budget.text().length <= CLAUDE_CODE_CONTEXT_CAP, String(budget.text().length));
    assert.ok(budget.text().length > CLAUDE_CODE_CONTEXT_CAP - 510);
  });

  it('a heading without a line that fits is left out, and nothing at all is ""', () => {
    const budget = new ContextBudget(5, 'Intro:');
    budget.heading('Empty section:');
    assert.ok(!budget.add('x'.repeat(50)));
    assert.equal(budget.text(), '');
    assert.ok(budget.empty);
  });
});

describe('what a hook reads from its input', () => {
  it('identifiers: backticks, dotted, snake_case, camelCase, PascalCase with a hump; not plain words', () => {
    assert.deepEqual(identifiersIn('Why does `retry budget` call applyJitter and Client.resolveUrl?'), [
      'retry budget',
      'applyJitter',
      'Client.resolveUrl',
    ]);
    assert.deepEqual(identifiersIn('Where is parse_retry_after used by HttpClient in src/core/backoff.ts'), [
      'parse_retry_after',
      'HttpClient',
      'src/core/backoff.ts',
    ]);
    assert.deepEqual(identifiersIn('How does the retry logic work? Please explain It.'), []);
  });

  it('pattern words leave out regex escapes, wildcards and extensions', () => {
    assert.equal(patternWords('resolveUrl\\('), 'resolveUrl');
    assert.equal(patternWords('**/StatusError*.ts'), 'StatusError');
    assert.equal(patternWords('\\bfoo\\s+bar_baz'), 'foo bar_baz');
    assert.equal(patternWords('*.ts'), '');
  });

  it('paths relative to the working folder; folder names of POSIX and Windows paths', () => {
    assert.equal(repoPath('/home/dev/wren/source/a.ts', '/home/dev/wren/'), 'source/a.ts');
    assert.equal(repoPath('./source/a.ts', '/home/dev/wren'), 'source/a.ts');
    assert.equal(repoPath('C:\\work\\wren\\a.ts', 'C:\\work\\wren'), 'a.ts');
    assert.equal(repoPath('/elsewhere/a.ts', '/home/dev/wren'), '/elsewhere/a.ts');
    assert.equal(folderName('/home/dev/Apollo Lander/'), 'Apollo Lander');
    assert.equal(folderName('C:\\Users\\dev\\wren'), 'wren');
    assert.equal(folderName(undefined), undefined);
  });
});

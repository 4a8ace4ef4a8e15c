import assert from 'node:assert/strict';
import { ERROR_CODES } from '../../src/errors.js';

/** A REST answer as the tests' request helpers return it. */
export interface Answer {
  status: number;
  body: any;
}

const CATALOGUE = new Set(Object.keys(ERROR_CODES));

/** A short, printable account of a value (huge strings and deep nests are not printed whole). */
export function describeValue(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 160 ? `${text.slice(0, 160)}… (${text.length} characters)` : text;
}

/** No stack trace, source path or `stack` field anywhere in a body (JSON or text). */
export function assertNoInternals(body: unknown, label: string): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  assert.doesNotMatch(
    text,
    /\n\s+at |\bat .+:\d+:\d+|node_modules|\.ts:\d+|"stack"/,
    `${label}: no stack trace in the body`,
  );
}

/** Exactly `{error: {code, message, details}}` with HTTP `status`, catalogue code `code` and a message. */
export function assertError(r: Answer, status: number, code: string, label: string): void {
  assert.equal(r.status, status, `${label}: HTTP ${status} (got ${r.status}: ${JSON.stringify(r.body)})`);
  assert.equal(typeof r.body, 'object', `${label}: a JSON body`);
  assert.deepEqual(Object.keys(r.body).sort(), ['error'], label);
  assert.deepEqual(Object.keys(r.body.error).sort(), ['code', 'details', 'message'], label);
  assert.equal(r.body.error.code, code, `${label}: code`);
  assert.equal(typeof r.body.error.message, 'string', label);
  assert.ok(r.body.error.message.length > 0, `${label}: a message`);
  assertNoInternals(r.body, label);
}

/** A 400 VALIDATION_ERROR whose message and `details.issues` (each `{field, message}`) name `field`. */
export function assertValidation(r: Answer, field: string, label: string): void {
  assertError(r, 400, 'VALIDATION_ERROR', label);
  assert.ok(r.body.error.message.includes(field), `${label}: message names "${field}": ${r.body.error.message}`);
  const issues = r.body.error.details?.issues;
  assert.ok(Array.isArray(issues) && issues.length > 0, `${label}: details.issues is a non-empty list`);
  for (const issue of issues) {
    assert.deepEqual(Object.keys(issue).sort(), ['field', 'message'], `${label}: each issue is {field, message}`);
    assert.equal(typeof issue.field, 'string', label);
    assert.equal(typeof issue.message, 'string', label);
    assert.ok(issue.message.length > 0, label);
  }
  assert.ok(
    issues.some((i: { field: string }) => i.field === field),
    `${label}: an issue for "${field}" in ${JSON.stringify(issues)}`,
  );
}

/**
 * Any 4xx REST body, whatever the code: `{error: {code, message, details}}` with a catalogue code, a
 * message and no stack trace; a validation error lists issues that each name a field. For
 * generated input, where the test cannot know which refusal comes.
 */
export function assertErrorBody(status: number, body: any, label: string): void {
  assert.ok(
    body && typeof body === 'object' && body.error && typeof body.error === 'object',
    `${label}: an {error} body, got ${describeValue(body)}`,
  );
  const { code, message, details } = body.error;
  assert.ok(CATALOGUE.has(code), `${label}: catalogue code, got ${code}`);
  assert.equal(typeof message, 'string', `${label}: a message`);
  assert.ok(message.length > 0, `${label}: a non-empty message`);
  assert.ok(
    !/\n\s+at |node_modules|\.ts:\d+/.test(JSON.stringify(body)),
    `${label}: no stack trace in ${describeValue(body)}`,
  );
  if (code === 'VALIDATION_ERROR') {
    const issues = details?.issues;
    assert.ok(
      Array.isArray(issues) && issues.length > 0,
      `${label}: a validation error lists details.issues: ${describeValue(body)}`,
    );
    for (const issue of issues) {
      assert.ok(
        typeof issue.field === 'string' && issue.field.length > 0,
        `${label}: every issue names a field: ${describeValue(body)}`,
      );
      assert.equal(typeof issue.message, 'string', label);
    }
  }
  assert.ok(status >= 400 && status < 500, `${label}: a 4xx status, got ${status}`);
}

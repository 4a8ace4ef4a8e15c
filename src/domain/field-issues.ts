import type { z } from 'zod';
import type { FieldIssue } from '../errors.js';

/** Longest key an issue names whole: an unknown field's name comes from the caller. */
const MAX_SEGMENT = 100;

/** A path segment as a field name: an empty key is shown quoted, so every issue names something; a long one is cut. */
const segment = (key: PropertyKey) => {
  const name = key === '' ? '""' : String(key);
  return name.length > MAX_SEGMENT ? `${name.slice(0, MAX_SEGMENT)}…` : name;
};

/** Zod issues as field-named problems: `priority: Too big: expected number to be <=10`. */
export function toFieldIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.flatMap((issue): FieldIssue[] => {
    const base = issue.path.map(segment).join('.');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({
        field: base ? `${base}.${segment(key)}` : segment(key),
        message: 'Unknown field',
      }));
    }
    return [{ field: base || '(arguments)', message: issue.message }];
  });
}

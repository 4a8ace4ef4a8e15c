import { z } from 'zod';

/**
 * What Postgres cannot store as sent, in a string: NUL (refused by the server), or a lone UTF-16
 * surrogate (no UTF-8 form: the drivers silently store U+FFFD instead, so the row would differ from
 * the input). Undefined when the string is storable. Every string the service accepts passes this.
 */
export function unstorable(s: string): string | undefined {
  if (s.includes('\0')) return 'must not contain NUL characters';
  if (!isWellFormed(s)) return 'must be well-formed Unicode (no lone surrogates)';
  return undefined;
}

/** `String.prototype.isWellFormed` (ES2024, in Node since 20; the project's TypeScript lib is ES2023). */
export const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * The one schema behind every input string: at most `max` characters (required: no input is
 * unbounded), and storable (see `unstorable`). `trim` trims first; `nonEmpty` then refuses an empty
 * value; `what` names the field in the messages (`title must be at most 200 characters`).
 * A value over `max` stops there, so a huge value costs one length check.
 */
export function text(max: number, options: { what?: string; trim?: boolean; nonEmpty?: boolean } = {}) {
  const subject = options.what ? `${options.what} must` : 'must';
  let schema = z.string();
  if (options.trim) schema = schema.trim();
  if (options.nonEmpty) schema = schema.min(1, `${subject} not be empty`);
  return schema
    .max(max, { error: `${subject} be at most ${max} characters`, abort: true })
    .superRefine((value, ctx) => {
      const problem = unstorable(value);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });
}

/** A required, trimmed name of at most `max` characters. */
export const name = (what: string, max = 200) => text(max, { what, trim: true, nonEmpty: true });

/** Text of one fixed form (`pattern`), at most `max` characters. */
export const pattern = (max: number, regex: RegExp, message: string) => text(max).regex(regex, message);

/** A 12-hex-character id, any case (stored lowercase). */
export const hexId = pattern(12, /^[0-9a-fA-F]{12}$/, 'must be 12 hexadecimal characters');

/** A graph id: what graph ids are made of, 1-64 characters. */
export const graphId = pattern(
  64,
  /^[A-Za-z0-9._-]{1,64}$/,
  'must be 1-64 letters, digits, dots, dashes or underscores',
);

/**
 * An ISO 8601 date-time with offset, of years 0001-9999 (Postgres has no year 0) and at most
 * nanosecond precision.
 */
export const timestamp = () =>
  z.iso
    .datetime({ offset: true, error: 'must be an ISO 8601 date-time, e.g. 2026-01-31T00:00:00Z' })
    .max(40, { error: 'must be an ISO 8601 date-time of at most 40 characters', abort: true })
    .refine((s) => !s.startsWith('0000'), 'must be a date-time from the year 0001 on');

/** The largest `offset`: far past any real list, and a plain integer for Postgres. */
export const MAX_OFFSET = 1_000_000_000;

/** limit/offset paging with the given default and maximum page size. */
export const page = (fallback: number, max: number) => ({
  limit: z.number().int().min(1).max(max).default(fallback).describe(`Page size (1-${max}, default ${fallback})`),
  offset: z.number().int().min(0).max(MAX_OFFSET).default(0).describe(`Matches to skip (0-${MAX_OFFSET}, default 0)`),
});

import { z } from 'zod';

/** Text Postgres can store: everything but NUL. */
export const text = () => z.string().refine((s) => !s.includes('\0'), 'must not contain NUL characters');

/** A required, trimmed name of at most `max` characters. */
export const name = (what: string, max = 200) =>
  text()
    .trim()
    .min(1, `${what} must not be empty`)
    .max(max, `${what} must be at most ${max} characters`);

/** A 12-hex-character id, any case (stored lowercase). */
export const hexId = z.string().regex(/^[0-9a-fA-F]{12}$/, 'must be 12 hexadecimal characters');

/** limit/offset paging with the given default and maximum page size. */
export const page = (fallback: number, max: number) => ({
  limit: z.number().int().min(1).max(max).default(fallback).describe(`Page size (1-${max}, default ${fallback})`),
  offset: z.number().int().min(0).default(0).describe('Matches to skip (default 0)'),
});

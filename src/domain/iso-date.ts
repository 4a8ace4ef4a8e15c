/**
 * A database timestamp as the API shows it: ISO 8601 in UTC (`2026-12-01T14:24:54.000Z`). Drivers
 * hand timestamptz over as a Date, but a value read through JSON or raw SQL may be its text, so
 * both are taken.
 */
export const iso = (d: Date | string): string => (d instanceof Date ? d : new Date(d)).toISOString();

/** {@link iso}, with null (a timestamp not set yet) kept as null. */
export const isoOrNull = (d: Date | string | null | undefined): string | null => (d == null ? null : iso(d));

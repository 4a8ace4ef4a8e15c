/**
 * Whether a text without parameters is one query that may be prepared: it starts with select,
 * with, insert, update, delete or values and holds no `;` (migrations and other scripts hold
 * several statements and go by the simple protocol; a `;` inside a literal only keeps a text
 * unprepared). Transaction control and settings are not worth a name: nothing to plan.
 */
export function isPreparableQuery(text: string): boolean {
  return PREPARABLE.test(text) && !text.includes(';');
}
const PREPARABLE = /^\s*(?:select|with|insert|update|delete|values)\b/i;

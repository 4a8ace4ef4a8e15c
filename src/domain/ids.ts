import { randomBytes } from 'node:crypto';

/** A new id: 12 lowercase hex characters (48 random bits), the format of the spec's examples. */
export function newId(): string {
  return randomBytes(6).toString('hex');
}

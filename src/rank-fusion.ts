/**
 * Reciprocal rank fusion's constant: a result at rank r (1-based) of one ranking adds
 * `1 / (RRF_K + r)` (times the ranking's weight). 60 is the value of Cormack et al. (2009), used
 * by memory search (db/queries/memories/hybrid-search.ts) and resolve_context's channels alike.
 */
export const RRF_K = 60;

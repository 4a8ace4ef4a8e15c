/**
 * Reciprocal rank fusion's constant: a result at rank r (1-based) of one ranking adds
 * `1 / (RRF_K + r)` (times the ranking's weight). 60 is the value of Cormack et al. (2009), used
 * by resolve_context's channels. (Memory search fuses by scores instead, not ranks: see
 * db/queries/memories/hybrid-search.ts.)
 */
export const RRF_K = 60;

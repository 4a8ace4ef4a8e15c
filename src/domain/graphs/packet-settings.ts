/**
 * What a resolve_context packet shows, set for the service by the `DEVLENS_PACKET_*` variables
 * (spec "Packet content toggles"; docs/configuration.md).
 */
export interface PacketSettings {
  /** The per-node `meta:` segment on each NODES line (visibility, kind, signature, return type). */
  meta: boolean;
  /** The CODE section (source bodies of the top nodes); a call's `code` argument overrides it. */
  code: boolean;
  /** The ANSWER, WHAT and CONFIDENCE lines; off for diagnosing the ranking alone. */
  answer: boolean;
  /** `legacy`: the pre-fusion additive ranking (diagnostic); `rrf`: reciprocal rank fusion. */
  ranker: 'rrf' | 'legacy';
}

/** The toggles' defaults: what a service without `DEVLENS_PACKET_*` variables shows. */
export const DEFAULT_PACKET: PacketSettings = { meta: true, code: false, answer: true, ranker: 'rrf' };

/**
 * Reading a resolve_context packet (src/domain/graphs/render-packet.ts) the way an agent would:
 * the ANSWER line names a node as its packet number (`ANSWER 1`, 0 when nothing matched), and the
 * IDMAP line maps every packet number back to its node id (`IDMAP N1=src/a.ts::f N2=file::src/b.ts`).
 */
export interface PacketReading {
  /** The node id the ANSWER names, or null (ANSWER 0, or an ANSWER the IDMAP does not map). */
  answer: string | null;
  /** Every node id of the packet, in packet (rank) order. */
  ids: string[];
}

export function readPacket(packet: string): PacketReading {
  const lines = packet.split('\n');
  const idmap = lines.find((line) => line.startsWith('IDMAP '));
  const byNumber = new Map<string, string>();
  const ids: string[] = [];
  if (idmap) {
    // Split before each ` N<k>=` so that an id holding a space (rare, but allowed) stays whole.
    for (const entry of idmap.slice('IDMAP '.length).split(/ (?=N\d+=)/)) {
      const m = /^N(\d+)=(.+)$/.exec(entry.trim());
      if (!m) continue;
      byNumber.set(m[1]!, m[2]!);
      ids.push(m[2]!);
    }
  }
  let answer: string | null = null;
  for (const line of lines) {
    const m = /^ANSWER (?:N)?(\d+)\s*$/.exec(line);
    if (!m) continue;
    answer = m[1] === '0' ? null : (byNumber.get(m[1]!) ?? null);
    break;
  }
  return { answer, ids };
}

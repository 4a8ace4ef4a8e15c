const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ['year', 365 * 86_400],
  ['month', 30 * 86_400],
  ['day', 86_400],
  ['hour', 3_600],
  ['minute', 60],
];
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

/** "3 minutes ago", "yesterday": how long ago an ISO timestamp was, for freshness at a glance. */
export function ago(iso: string, now = Date.now()): string {
  const seconds = (Date.parse(iso) - now) / 1000;
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size) return relative.format(Math.round(seconds / size), unit);
  }
  return 'just now';
}

/** A timestamp shown as "x ago", with the full local time on hover and for assistive technology. */
export function When({ iso }: { iso: string }) {
  const full = new Date(iso).toLocaleString();
  return (
    <time dateTime={iso} title={full}>
      {ago(iso)}
    </time>
  );
}

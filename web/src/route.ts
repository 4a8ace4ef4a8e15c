import { useEffect, useState } from 'react';

/**
 * Pages by hash (`#/graphs/node/<id>`): the service serves one index.html, so there are no server-side
 * routes to keep in step. The first segment names the page, the rest (URI-decoded) are its arguments.
 */
export const PAGES = { plans: 'Plans', tasks: 'Tasks', memory: 'Memory', graphs: 'Code graphs' } as const;
export type PageName = keyof typeof PAGES;

export interface Route {
  page: PageName;
  args: string[];
}

export function parseRoute(hash: string): Route {
  const [name = '', ...rest] = hash.replace(/^#\/?/, '').split('/');
  const page = Object.hasOwn(PAGES, name) ? (name as PageName) : 'plans';
  const args = rest
    .filter((s) => s !== '')
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
  return { page, args };
}

/** The link to a page with arguments; each argument is encoded, so ids with `/` or `#` survive. */
export function href(page: PageName, ...args: string[]): string {
  return `#/${[page, ...args.map(encodeURIComponent)].join('/')}`;
}

/** The current route, following hash changes (links, back and forward). */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const onHash = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
  return route;
}

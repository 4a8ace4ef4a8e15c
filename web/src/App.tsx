import { useEffect, useState } from 'react';
import { api, apiKey } from './api';
import { MemoryPage } from './pages/Memory';
import { Plans } from './pages/Plans';
import { SignIn } from './pages/SignIn';

/** Pages by hash (`#/plans`): the service serves one index.html, no server-side routes to keep in step. */
const PAGES = { plans: 'Plans', memory: 'Memory' } as const;
type Page = keyof typeof PAGES;

function pageOf(hash: string): Page {
  const name = hash.replace(/^#\/?/, '');
  return name in PAGES ? (name as Page) : 'plans';
}

/** Who is looking: unknown until the service answered once; `needsKey` when it refused without one. */
type Session = { state: 'checking' } | { state: 'in' } | { state: 'needsKey'; reason: string };

export function App() {
  const [page, setPage] = useState<Page>(() => pageOf(window.location.hash));
  const [session, setSession] = useState<Session>({ state: 'checking' });

  useEffect(() => {
    const onHash = () => setPage(pageOf(window.location.hash));
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  // One cheap call tells whether the key (or no key, with AUTH=off) is let in.
  const check = async () => {
    const { response } = await api.GET('/api/v1/plans', { params: { query: { limit: 1 } } });
    if (response.status === 401) {
      const had = apiKey.get() !== null;
      apiKey.clear();
      setSession({ state: 'needsKey', reason: had ? 'The API key was refused (unknown or revoked).' : '' });
    } else setSession({ state: 'in' });
  };
  useEffect(() => {
    void check();
  }, []);

  if (session.state === 'checking') return <p className="status">Connecting…</p>;
  if (session.state === 'needsKey') {
    return (
      <SignIn
        reason={session.reason}
        onKey={(key) => {
          apiKey.set(key);
          setSession({ state: 'checking' });
          void check();
        }}
      />
    );
  }
  return (
    <>
      <header className="bar">
        <span className="brand">DevStream Hub</span>
        <nav aria-label="Pages">
          {(Object.keys(PAGES) as Page[]).map((p) => (
            <a key={p} href={`#/${p}`} aria-current={p === page ? 'page' : undefined}>
              {PAGES[p]}
            </a>
          ))}
        </nav>
        {apiKey.get() && (
          <button
            type="button"
            onClick={() => {
              apiKey.clear();
              setSession({ state: 'needsKey', reason: '' });
            }}
          >
            Sign out
          </button>
        )}
      </header>
      <main>
        {page === 'plans' && <Plans />}
        {page === 'memory' && <MemoryPage />}
      </main>
    </>
  );
}

import { useEffect, useState } from 'react';
import { api, apiKey, errorOf } from './api';
import { Board } from './pages/Board';
import { Graphs } from './pages/graphs/Graphs';
import { MemoryPage } from './pages/Memory';
import { Plans } from './pages/Plans';
import { SignIn } from './pages/SignIn';
import { href, PAGES, useRoute, type PageName } from './route';
import { MeContext, type Me } from './session';

/** Who is looking: unknown until the service answered once; `needsKey` when it refused. */
type Session = { state: 'checking' } | { state: 'in'; me: Me } | { state: 'needsKey'; reason: string };

export function App() {
  const route = useRoute();
  const [session, setSession] = useState<Session>({ state: 'checking' });

  // GET /api/v1/me tells whether the key (or no key, with AUTH=off) is let in, and what it may do.
  const check = async () => {
    const { data, error, response } = await api.GET('/api/v1/me');
    if (data) return setSession({ state: 'in', me: data });
    const had = apiKey.get() !== null;
    apiKey.clear();
    if (response.status === 401) setSession({ state: 'needsKey', reason: had ? 'The API key was refused (unknown or revoked).' : '' });
    else if (response.status === 403) setSession({ state: 'needsKey', reason: 'This API key may not read: the dashboard needs the "read" scope.' });
    else setSession({ state: 'needsKey', reason: `The service did not answer as expected: ${errorOf(error, response.status).message}. Try again.` });
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
  const { me } = session;
  return (
    <MeContext.Provider value={me}>
      <header className="bar">
        <span className="brand">DevStream Hub</span>
        <nav aria-label="Pages">
          {(Object.keys(PAGES) as PageName[]).map((p) => (
            <a key={p} href={href(p)} aria-current={p === route.page ? 'page' : undefined}>
              {PAGES[p]}
            </a>
          ))}
        </nav>
        <span className="who" title="The API key in use and its scopes">
          {me.name ?? 'no key (AUTH=off)'} · {me.scopes.join(', ')}
        </span>
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
        {route.page === 'plans' && <Plans />}
        {route.page === 'tasks' && <Board args={route.args} />}
        {route.page === 'memory' && <MemoryPage />}
        {route.page === 'graphs' && <Graphs args={route.args} />}
      </main>
    </MeContext.Provider>
  );
}

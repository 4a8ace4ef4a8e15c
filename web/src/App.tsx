import { useEffect, useRef, useState } from 'react';
import { api, apiKey, errorOf, NETWORK_ERROR, onKeyRefused } from './api';
import { Board } from './pages/Board';
import { Graphs } from './pages/graphs/Graphs';
import { MemoryPage } from './pages/Memory';
import { Plans } from './pages/Plans';
import { SignIn } from './pages/SignIn';
import { href, PAGES, useRoute, type PageName } from './route';
import { MeContext, type Me } from './session';

/**
 * Who is looking: unknown until the service answered once; `needsKey` when it refused the key (or
 * there is none); `unreachable` when it did not answer as expected (the key is kept: try again).
 */
type Session =
  | { state: 'checking' }
  | { state: 'in'; me: Me }
  | { state: 'needsKey'; reason: string }
  | { state: 'unreachable'; reason: string };

export function App() {
  const route = useRoute();
  const [session, setSession] = useState<Session>({ state: 'checking' });
  const current = useRef(session);
  current.current = session;

  // GET /api/v1/me tells whether the key (or no key, with AUTH=off) is let in, and what it may do.
  const check = async () => {
    setSession({ state: 'checking' });
    let answer;
    try {
      answer = await api.GET('/api/v1/me');
    } catch {
      return setSession({ state: 'unreachable', reason: `${NETWORK_ERROR.message}.` });
    }
    const { data, error, response } = answer;
    if (data) return setSession({ state: 'in', me: data });
    if (response.status === 401) {
      const had = apiKey.get() !== null;
      apiKey.clear();
      return setSession({ state: 'needsKey', reason: had ? 'The API key was refused (unknown or revoked).' : '' });
    }
    if (response.status === 403) {
      apiKey.clear();
      return setSession({
        state: 'needsKey',
        reason: 'This API key may not read: the dashboard needs the "read" scope.',
      });
    }
    setSession({ state: 'unreachable', reason: `${errorOf(error, response.status).message}.` });
  };
  useEffect(() => {
    void check();
    // A key revoked while the page is open: any call answered 401 signs out.
    // (While signing in, check() answers the 401 itself.)
    return onKeyRefused(() => {
      if (current.current.state !== 'in') return;
      apiKey.clear();
      setSession({
        state: 'needsKey',
        reason: 'The service refused the API key: it may have been revoked. Sign in again.',
      });
    });
  }, []);

  if (session.state === 'checking') return <p className="status">Connecting…</p>;
  if (session.state === 'unreachable') {
    return (
      <main className="signin">
        <h1>DevStream Hub</h1>
        <p role="alert" className="error">
          The service did not answer as expected: {session.reason}
        </p>
        <button type="button" onClick={() => void check()}>
          Try again
        </button>
      </main>
    );
  }
  if (session.state === 'needsKey') {
    return (
      <SignIn
        reason={session.reason}
        onKey={(key) => {
          apiKey.set(key);
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

import { useId, useState, type FormEvent } from 'react';

/** Asks for an API key (kept in this tab's session storage only). */
export function SignIn({ reason, onKey }: { reason: string; onKey(key: string): void }) {
  const [key, setKey] = useState('');
  const id = useId();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (key.trim()) onKey(key.trim());
  };
  return (
    <main className="signin">
      <h1>DevStream Hub</h1>
      <form onSubmit={submit}>
        <label htmlFor={id}>API key</label>
        <input
          id={id}
          type="password"
          autoComplete="off"
          value={key}
          onChange={(e) => setKey(e.target.value)}
          placeholder="dsh_…"
          required
        />
        <button type="submit">Sign in</button>
        {reason && (
          <p role="alert" className="error">
            {reason}
          </p>
        )}
        <p className="hint">
          The key stays in this browser tab until it closes. Ask an admin for one (POST /api/v1/keys).
        </p>
      </form>
    </main>
  );
}

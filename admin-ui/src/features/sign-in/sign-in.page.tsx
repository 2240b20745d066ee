import { useState, type FormEvent } from 'react';
import { useAuth } from '../../lib/auth';
import { ThemeToggle } from '../../components/ui';

export function SignInPage() {
  const { signIn } = useAuth();
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!token.trim()) return setError('Paste an API token.');
    setBusy(true);
    setError(await signIn(token));
    setBusy(false);
  };
  return (
    <main className="center">
      <form className="card signin stack" onSubmit={submit} aria-labelledby="signin-title">
        <div className="brand" style={{ padding: 0 }}>
          <span className="brand-mark" aria-hidden="true">M</span>
          <h1 id="signin-title">Muninn admin</h1>
        </div>
        <p className="muted" style={{ margin: 0 }}>
          Sign in with an API token. The owner's token is in <code>data/owner.token</code>; others get one with{' '}
          <code>muninn token create</code> or from an owner.
        </p>
        <label className="field">
          API token
          <input name="token" type="password" autoComplete="off" autoFocus value={token} onChange={(e) => setToken(e.target.value)} placeholder="mun_…" />
        </label>
        {error ? (
          <div className="alert" role="alert">
            {error}
          </div>
        ) : null}
        <div className="row spread">
          <ThemeToggle />
          <button className="primary" type="submit" disabled={busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </div>
        <p className="muted small" style={{ margin: 0 }}>
          The token is kept for this browser tab only (session storage) until you sign out.
        </p>
      </form>
    </main>
  );
}

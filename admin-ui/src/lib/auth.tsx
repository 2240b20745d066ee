import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { GraphQLClient, GraphQLRequestError, onUnauthenticated } from './graphql-client';
import { MeDocument, type MeQuery } from '../gql/graphql';

const KEY = 'muninn.token';
type Me = MeQuery['me'];

interface AuthState {
  client: GraphQLClient | null;
  me: Me | null;
  /** True while the stored token is being checked. */
  checking: boolean;
  signIn(token: string): Promise<string | null>;
  signOut(): void;
}

const AuthContext = createContext<AuthState | null>(null);

export function useAuth(): AuthState {
  const v = useContext(AuthContext);
  if (!v) throw new Error('useAuth outside AuthProvider');
  return v;
}

/** The signed-in user: the API token lives in sessionStorage (this browser tab) until sign-out. */
export function AuthProvider({ children }: { children: ReactNode }) {
  const [client, setClient] = useState<GraphQLClient | null>(null);
  const [me, setMe] = useState<Me | null>(null);
  const [checking, setChecking] = useState(() => !!sessionStorage.getItem(KEY));

  const signOut = useCallback(() => {
    sessionStorage.removeItem(KEY);
    setClient((c) => {
      c?.close();
      return null;
    });
    setMe(null);
  }, []);

  const signIn = useCallback(async (token: string): Promise<string | null> => {
    const c = new GraphQLClient(token.trim());
    try {
      const r = await c.request(MeDocument, {});
      if (r.me.trust === 'BLOCKED' || r.me.trust === 'GUEST') return 'The admin console needs MEMBER trust or higher.';
      sessionStorage.setItem(KEY, token.trim());
      setClient(c);
      setMe(r.me);
      return null;
    } catch (e) {
      return e instanceof GraphQLRequestError && e.code === 'UNAUTHENTICATED' ? 'This token is not valid (revoked or mistyped).' : (e as Error).message;
    }
  }, []);

  useEffect(() => {
    const stored = sessionStorage.getItem(KEY);
    if (stored) void signIn(stored).then((err) => (err ? signOut() : undefined)).finally(() => setChecking(false));
  }, [signIn, signOut]);
  useEffect(() => {
    const off = onUnauthenticated(signOut);
    return () => void off();
  }, [signOut]);

  const value = useMemo(() => ({ client, me, checking, signIn, signOut }), [client, me, checking, signIn, signOut]);
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

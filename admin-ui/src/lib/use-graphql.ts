import { useCallback, useEffect, useRef, useState } from 'react';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { useAuth } from './auth';
import { GraphQLRequestError } from './graphql-client';

export interface QueryState<R> {
  data: R | null;
  loading: boolean;
  error: GraphQLRequestError | null;
  refetch(): Promise<void>;
}

/** Runs a query when mounted and when `variables` change; `pollMs` refreshes it while mounted. */
export function useQuery<R, V>(doc: TypedDocumentNode<R, V>, variables?: V, options: { pollMs?: number; skip?: boolean } = {}): QueryState<R> {
  const { client } = useAuth();
  const [data, setData] = useState<R | null>(null);
  const [loading, setLoading] = useState(!options.skip);
  const [error, setError] = useState<GraphQLRequestError | null>(null);
  const key = JSON.stringify(variables ?? {});
  const seq = useRef(0);
  const run = useCallback(async () => {
    if (!client || options.skip) return;
    const mine = ++seq.current;
    try {
      const r = await client.request(doc, JSON.parse(key) as V);
      if (mine === seq.current) {
        setData(r);
        setError(null);
      }
    } catch (e) {
      if (mine === seq.current) setError(e instanceof GraphQLRequestError ? e : new GraphQLRequestError(String(e), 'ERROR'));
    } finally {
      if (mine === seq.current) setLoading(false);
    }
  }, [client, doc, key, options.skip]);
  useEffect(() => {
    setLoading(!options.skip);
    void run();
    if (!options.pollMs) return;
    const t = setInterval(() => void run(), options.pollMs);
    return () => clearInterval(t);
  }, [run, options.pollMs, options.skip]);
  return { data, loading, error, refetch: run };
}

/** A mutation with its busy and error state; `run` resolves to the data or null on error (shown via `error`). */
export function useMutation<R, V>(doc: TypedDocumentNode<R, V>) {
  const { client } = useAuth();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<GraphQLRequestError | null>(null);
  const run = useCallback(
    async (variables: V): Promise<R | null> => {
      if (!client) return null;
      setBusy(true);
      setError(null);
      try {
        return await client.request(doc, variables);
      } catch (e) {
        setError(e instanceof GraphQLRequestError ? e : new GraphQLRequestError(String(e), 'ERROR'));
        return null;
      } finally {
        setBusy(false);
      }
    },
    [client, doc],
  );
  return { run, busy, error, clearError: () => setError(null) };
}

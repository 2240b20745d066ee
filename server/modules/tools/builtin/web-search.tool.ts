import { z } from 'zod';
import { TrustLevel } from '../../../common/trust';
import { clip } from '../tool-args';
import { defineTool, type Tool } from '../tool';

export interface WebSearchToolOptions {
  /** Base URL of a SearXNG-compatible server (`tools.web_search.searxng_url`); ours, so it is not SSRF-checked. */
  searxngUrl: string;
  /** Timeout of one search. @default 15000 */
  timeoutMs?: number;
  /** HTTP client. @default globalThis.fetch */
  fetch?: typeof fetch;
}

const schema = z
  .object({
    query: z.string().trim().min(1).max(500).describe('What to search for.'),
    max_results: z.number().int().min(1).max(10).default(5).describe('How many results to return.'),
  })
  .strict();

export type WebSearchArgs = z.output<typeof schema>;

const resultSchema = z.object({
  results: z
    .array(
      z.object({
        title: z.string().optional().catch(undefined),
        url: z.string().optional().catch(undefined),
        content: z.string().optional().catch(undefined),
      }),
    )
    .catch([]),
});

/** `web_search` (TRUSTED): top results (title, url, snippet) from the configured SearXNG endpoint. */
export function createWebSearchTool(options: WebSearchToolOptions): Tool<WebSearchArgs> {
  const doFetch = options.fetch ?? globalThis.fetch;
  const base = options.searxngUrl.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? 15_000;
  return defineTool({
    name: 'web_search',
    description: 'Searches the web and returns the top results with title, URL and snippet.',
    schema,
    minTrust: TrustLevel.TRUSTED,
    summarizeArgs: (args) => `query=${JSON.stringify(clip(args.query, 80))}`,
    async run(tc, args) {
      const url = `${base}/search?${new URLSearchParams({ q: args.query, format: 'json' }).toString()}`;
      const signal = AbortSignal.any([tc.signal, AbortSignal.timeout(timeoutMs)]);
      const res = await doFetch(url, { headers: { accept: 'application/json' }, signal });
      if (!res.ok) throw new Error(`the search service answered ${res.status} ${res.statusText}`.trim());
      let json: unknown;
      try {
        json = await res.json();
      } catch {
        throw new Error('the search service did not answer JSON (is format=json enabled in SearXNG?)');
      }
      const parsed = resultSchema.safeParse(json);
      const rows = parsed.success ? parsed.data.results : [];
      const results = rows
        .filter((r) => r.url)
        .slice(0, args.max_results)
        .map((r) => ({ title: clip(r.title ?? '', 200), url: r.url!, snippet: clip(r.content ?? '', 400) }));
      return { query: args.query, results };
    },
  });
}

import * as documents from '../../../admin-ui/src/gql/graphql';
import { startTestApp, type TestApp } from '../../support/test-app';

/**
 * Every query document of the admin UI passes the server's abuse limits (cost, depth, aliases, tokens)
 * with the default config: a page that asks for too much would otherwise only fail in the browser.
 */
describe('admin UI documents within the GraphQL limits', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ workers: false, config: { log: { level: 'warn' } } });
  });
  afterAll(() => t.close());

  it('no query of the UI is refused by validation', async () => {
    const owner = t.client(t.ownerToken);
    const variables = { from: new Date(0).toISOString(), to: new Date().toISOString(), groupBy: 'DAY', state: 'FAILED', key: 'web:none', query: 'anything', id: 'none', sessionId: 'none', beatId: 'none', cron: '0 7 * * *', fresh: false };
    const queries = Object.entries(documents).filter(([name, doc]) => name.endsWith('Document') && JSON.stringify(doc).includes('"operation":"query"'));
    expect(queries.length).toBeGreaterThan(10);
    for (const [name, doc] of queries) {
      const res = await owner.http(doc as never, variables as never);
      const refused = (res.errors ?? []).filter((e) => e.extensions?.code === 'GRAPHQL_VALIDATION_FAILED' || e.extensions?.code === 'GRAPHQL_PARSE_FAILED');
      expect({ name, status: res.status, refused }).toEqual({ name, status: 200, refused: [] });
    }
    await owner.close();
  });
});

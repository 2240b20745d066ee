import { ServerInfoDocument } from '../../gql/graphql';
import { useQuery } from '../../lib/use-graphql';
import { MockModelBanner } from './mock-model-banner';

/** The "no model is configured" banner, shown only while the server answers with the built-in mock. */
export function MockModelNotice() {
  const q = useQuery(ServerInfoDocument, {});
  return q.data?.serverInfo.usingMockModel ? <MockModelBanner /> : null;
}

import type { ComponentType } from 'react';
import type { TrustLevel } from '../../gql/graphql';
import { OverviewPage } from '../overview/overview.page';

export interface PageDef {
  path: string;
  title: string;
  /** Lowest trust that sees the page in the nav and may open it (the server checks again). */
  minTrust: TrustLevel;
  section: 'Assistant' | 'Administration';
  component: ComponentType<{ params: string[] }>;
}

/** Every page of the console, in nav order. */
export const PAGES: PageDef[] = [
  { path: '/', title: 'Overview', minTrust: 'ADMIN', section: 'Administration', component: OverviewPage },
];

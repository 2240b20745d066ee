import type { ComponentType } from 'react';
import type { TrustLevel } from '../../gql/graphql';
import { OverviewPage } from '../overview/overview.page';
import { ChatPage } from '../chat/chat.page';
import { SessionsPage } from '../sessions/sessions.page';
import { MemoriesPage } from '../memories/memories.page';
import { DocumentsPage } from '../documents/documents.page';
import { UsersPage } from '../users/users.page';
import { ApprovalsPage } from '../approvals/approvals.page';
import { ToolsPage } from '../tools/tools.page';
import { ChannelsPage } from '../channels/channels.page';
import { QueuesPage } from '../queues/queues.page';
import { UsagePage } from '../usage/usage.page';
import { AuditPage } from '../audit/audit.page';
import { BeatsPage } from '../beats/beats.page';
import { SkillsPage } from '../skills/skills.page';
import { WebhooksPage } from '../webhooks/webhooks.page';
import { AccountPage } from '../account/account.page';
import { ModelsPage } from '../models/models.page';
import { McpPage } from '../mcp/mcp.page';

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
  { path: '/chat', title: 'Chat', minTrust: 'MEMBER', section: 'Assistant', component: ChatPage },
  { path: '/sessions', title: 'Sessions', minTrust: 'MEMBER', section: 'Assistant', component: SessionsPage },
  { path: '/memories', title: 'Memories', minTrust: 'MEMBER', section: 'Assistant', component: MemoriesPage },
  { path: '/documents', title: 'Documents', minTrust: 'MEMBER', section: 'Assistant', component: DocumentsPage },
  { path: '/beats', title: 'Beats', minTrust: 'MEMBER', section: 'Assistant', component: BeatsPage },
  { path: '/mcp', title: 'MCP servers', minTrust: 'MEMBER', section: 'Assistant', component: McpPage },
  { path: '/account', title: 'Account', minTrust: 'MEMBER', section: 'Assistant', component: AccountPage },
  { path: '/', title: 'Overview', minTrust: 'ADMIN', section: 'Administration', component: OverviewPage },
  { path: '/users', title: 'Users & trust', minTrust: 'ADMIN', section: 'Administration', component: UsersPage },
  { path: '/approvals', title: 'Approvals', minTrust: 'ADMIN', section: 'Administration', component: ApprovalsPage },
  { path: '/channels', title: 'Channels', minTrust: 'ADMIN', section: 'Administration', component: ChannelsPage },
  { path: '/tools', title: 'Tools', minTrust: 'ADMIN', section: 'Administration', component: ToolsPage },
  { path: '/skills', title: 'Skills', minTrust: 'ADMIN', section: 'Administration', component: SkillsPage },
  { path: '/webhooks', title: 'Webhooks', minTrust: 'ADMIN', section: 'Administration', component: WebhooksPage },
  { path: '/models', title: 'Providers & models', minTrust: 'ADMIN', section: 'Administration', component: ModelsPage },
  { path: '/queues', title: 'Queues', minTrust: 'ADMIN', section: 'Administration', component: QueuesPage },
  { path: '/usage', title: 'Usage', minTrust: 'ADMIN', section: 'Administration', component: UsagePage },
  { path: '/audit', title: 'Audit log', minTrust: 'ADMIN', section: 'Administration', component: AuditPage },
];

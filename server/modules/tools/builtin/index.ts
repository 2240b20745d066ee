import type { AppConfig } from '../../../config';
import type { UserService } from '../../users';
import type { MessageSender } from '../message-sender';
import type { Tool } from '../tool';
import type { AddressPolicy, HostLookup } from './address-policy';
import { createCurrentTimeTool } from './current-time.tool';
import { createHttpRequestTool } from './http-request.tool';
import { createSendMessageTool } from './send-message.tool';
import { createShellTool } from './shell.tool';
import { createWebSearchTool } from './web-search.tool';

export interface BuiltinToolDeps {
  /** `tools.*` of the app config. */
  tools: AppConfig['tools'];
  users: Pick<UserService, 'findByIdentity' | 'identitiesOf' | 'findOne'>;
  /** Delivery port of `send_message`; without it the tool is not created. */
  messageSender?: MessageSender | null;
  /** DNS resolution for `http_request`. @default the system resolver */
  lookup?: HostLookup;
  /** Address policy for `http_request`. @default isPublicAddress */
  isAllowedAddress?: AddressPolicy;
  /** Clock of `current_time`. */
  now?: () => Date;
  /** HTTP client of `web_search`. @default globalThis.fetch */
  fetch?: typeof fetch;
}

/**
 * The built-in tools this config turns on: `current_time` and `http_request` always; `web_search` when
 * `tools.web_search.searxng_url` is set; `send_message` when a `messageSender` is given; `shell` only when
 * `tools.shell.enabled`.
 */
export function createBuiltinTools(deps: BuiltinToolDeps): Tool[] {
  const { tools } = deps;
  const list: Tool[] = [
    createCurrentTimeTool({ now: deps.now }),
    createHttpRequestTool({
      allowDomains: tools.http_request.allow_domains,
      maxBytes: tools.http_request.max_bytes,
      timeoutMs: tools.http_request.timeout_ms,
      lookup: deps.lookup,
      isAllowedAddress: deps.isAllowedAddress,
    }),
  ];
  if (tools.web_search.searxng_url) {
    list.push(createWebSearchTool({ searxngUrl: tools.web_search.searxng_url, timeoutMs: tools.http_request.timeout_ms, fetch: deps.fetch }));
  }
  if (deps.messageSender) list.push(createSendMessageTool({ users: deps.users, sender: deps.messageSender }));
  if (tools.shell.enabled) {
    list.push(createShellTool({ allow: tools.shell.allow, timeoutMs: tools.shell.timeout_ms, maxOutputChars: tools.max_output_chars }));
  }
  return list;
}

export { createCurrentTimeTool } from './current-time.tool';
export { createHttpRequestTool, MAX_REDIRECTS, type HttpRequestToolOptions } from './http-request.tool';
export { createWebSearchTool, type WebSearchToolOptions } from './web-search.tool';
export { createSendMessageTool, type SendMessageToolOptions } from './send-message.tool';
export { createShellTool, type ShellToolOptions } from './shell.tool';
export {
  isPublicAddress,
  embeddedIPv4,
  isBlockedHostname,
  matchesDomain,
  systemLookup,
  resolveAllowedTarget,
  pinnedLookup,
  AddressRefusedError,
  type AddressPolicy,
  type HostLookup,
  type OutboundTarget,
} from './address-policy';

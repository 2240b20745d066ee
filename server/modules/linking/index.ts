export { IdentityLinkService, SELF_LINK_CHANNELS, type IdentityLinkOptions, type LinkCode, type LinkRequest } from './identity-link.service';
export type { LinkCodeStore } from './link-code-store';

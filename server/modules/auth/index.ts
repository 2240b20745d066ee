export { ApiToken } from './api-token.entity';
export { ApiTokenService, type CreatedToken } from './api-token.service';
export { OwnerBootstrap, OWNER_TOKEN_FILE } from './owner-bootstrap';

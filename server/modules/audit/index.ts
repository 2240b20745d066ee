export { AuditEntry } from './audit-entry.entity';
export { AuditService, type AuditTarget } from './audit.service';

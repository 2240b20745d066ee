export { DeliveryService, type DrainResult } from './delivery.service';
export type { Mailbox, MailItem, MailHead, MailChat, MailboxLock, MailClaim, DeliveryJobs } from './mailbox';

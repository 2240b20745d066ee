export { DeliveryService, type DrainResult } from './delivery.service';
export type { Mailbox, MailItem, DeliveryJobs } from './mailbox';

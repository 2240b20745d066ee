export { Webhook } from './webhook.entity';
export { WebhookDelivery } from './webhook-delivery';
export { WebhookService, WEBHOOK_NAME, type CreateWebhookInput } from './webhook.service';
export { WebhookTrigger, WebhookRefusal, quoteWebhookBody, hookSessionKey, HOOK_CHANNEL, type WebhookCall, type WebhookRateLimit } from './webhook-trigger';
export { WebhookReplies, withoutWebhookTurns } from './webhook-replies';
export { generateWebhookSecret, hashWebhookSecret, secretMatches } from './webhook-secret';

export { Webhook } from './webhook.entity';

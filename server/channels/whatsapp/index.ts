export { messageIdOf, WhatsAppTransport, whatsAppTransportFromConfig, type WhatsAppTransportOptions } from './whatsapp.adapter';

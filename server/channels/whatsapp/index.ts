export { WhatsAppTransport, whatsAppTransportFromConfig, type WhatsAppTransportOptions } from './whatsapp.adapter';

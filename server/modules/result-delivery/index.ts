export { ResultDelivery, type ResultDeliveryRequest, type ResultTarget } from './result-delivery';

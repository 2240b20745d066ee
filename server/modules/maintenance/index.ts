export { HousekeepingService, type HousekeepingResult } from './housekeeping.service';

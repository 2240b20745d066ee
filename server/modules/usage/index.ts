export { UsageRecord } from './usage-record.entity';
export { UsageService, type UsageGroupBy, type UsageRow, type TokenCounts, type RecordUsageInput } from './usage.service';

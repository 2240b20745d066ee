export {
  UserDataService,
  type UserDataDeps,
  type UserDataOptions,
  type ExportRequest,
  type ExportResult,
  type ErasureReport,
} from './user-data.service';
export type { ErasureScope, UserErasureHook, UserExportJobs, ExportTicket, ExportTickets } from './user-data.ports';
export { buildUserDataMap, deletionOrder, isUserTable, ANONYMISED_TABLES, type UserTable } from './user-data-map';
export { ERASED_MARK } from './user-erasure';
export { EXPORT_FORMAT, type ExportManifest } from './user-export-writer';

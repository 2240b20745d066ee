export { BackupService, type BackupOptions, type BackupReport, type RestoreReport } from './backup.service';
export { BackupFileError, BackupRefusedError } from './backup.errors';
export { BACKUP_FORMAT, BACKUP_FORMAT_VERSION, type BackupManifest } from './backup-manifest';

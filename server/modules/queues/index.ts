export { JobState, JOB_STATES, type QueueInspector, type QueueJobInfo } from './queue-inspector';
export { QueueService, MAX_JOBS_LISTED } from './queue.service';
export { JobProgressService, type JobProgressSource, type JobProgressUpdate, type JobFollowRule } from './job-progress';

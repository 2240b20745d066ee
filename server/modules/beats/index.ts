export { Beat } from './beat.entity';
export { BeatRun } from './beat-run.entity';

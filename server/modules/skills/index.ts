export { LearnedSkill } from './learned-skill.entity';
export { parseSkillFile, SkillFileError, SKILL_NAME, type SkillDefinition } from './skill-file';
export { SkillSyncService, SKILL_FILE, type SkillProblem, type SkillSyncReport, type SkillSyncProgress } from './skill-sync.service';
export { SkillWatcher, type SkillWatcherOptions } from './skill-watcher';
export { SkillService, skillPlugin } from './skill.service';
export { SkillPrompter, type NextTurnSkills, type SkillMode } from './skill-prompter';
export { registerSkillCommands } from './skill-commands';
export { SkillSyncCommands, type SkillSyncJobs } from './skill-sync-jobs';

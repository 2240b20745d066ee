export { LearnedSkill } from './learned-skill.entity';

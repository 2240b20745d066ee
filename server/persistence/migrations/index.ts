import { Initial1796240211829 } from './1796240211829-initial';

/** Every migration, oldest first. */
export const MIGRATIONS = [Initial1796240211829] as const;

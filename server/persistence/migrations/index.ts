import { Initial1796240211829 } from './1796240211829-initial';
import { MemoryIndex1796244563057 } from './1796244563057-memoryindex';
import { MemoryKeywordIndex1796244563058 } from './1796244563058-memory-keyword-index';
import { BeatSchedules1796315211001 } from './1796315211001-beatschedules';
import { Webhooks1796316856970 } from './1796316856970-webhooks';
import { SkillSyncState1796498201146 } from './1796498201146-skillsyncstate';
import { Voice1796498673783 } from './1796498673783-voice';
import { Documents1796498805308 } from './1796498805308-documents';
import { McpServers1796498868515 } from './1796498868515-mcpservers';
import { ChannelSetups1796510286776 } from './1796510286776-channelsetups';
import { MemoryIndexOwnerType1796510702575 } from './1796510702575-memory-index-owner-type';
import { Budgets1796511047123 } from './1796511047123-budgets';
import { PendingMessages1796550897078 } from './1796550897078-pendingmessages';

/** Every migration, oldest first. */
export const MIGRATIONS = [Initial1796240211829, MemoryIndex1796244563057, MemoryKeywordIndex1796244563058, BeatSchedules1796315211001, Webhooks1796316856970, SkillSyncState1796498201146, Voice1796498673783, Documents1796498805308, McpServers1796498868515, ChannelSetups1796510286776, MemoryIndexOwnerType1796510702575, Budgets1796511047123, PendingMessages1796550897078] as const;

import { registerEnumType } from 'type-graphql';

export enum MemoryType {
  SUMMARY = 'summary',
  FACT = 'fact',
  LESSON = 'lesson',
  REMINDER = 'reminder',
}
registerEnumType(MemoryType, { name: 'MemoryType' });

export enum MemoryScope {
  USER = 'user',
  GROUP = 'group',
  GLOBAL = 'global',
}
registerEnumType(MemoryScope, { name: 'MemoryScope' });

import { z } from 'zod';
import { isTimeZone } from '../../../common/time-zone';
import { TrustLevel } from '../../../common/trust';
import { defineTool, type Tool } from '../tool';


const schema = z
  .object({
    timezone: z
      .string()
      .max(64)
      .refine(isTimeZone, 'must be an IANA time zone such as Europe/Berlin or America/New_York')
      .optional()
      .describe('IANA time zone, e.g. Europe/Berlin. Defaults to the server time zone.'),
  })
  .strict();

export type CurrentTimeArgs = z.output<typeof schema>;

/** `current_time` (MEMBER): the current date and time, in an optional IANA time zone. */
export function createCurrentTimeTool(options: { now?: () => Date } = {}): Tool<CurrentTimeArgs> {
  const now = options.now ?? (() => new Date());
  return defineTool({
    name: 'current_time',
    description: 'Returns the current date and time, optionally in an IANA time zone (e.g. Europe/Berlin).',
    schema,
    minTrust: TrustLevel.MEMBER,
    async run(_tc, args) {
      const date = now();
      const timezone = args.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
      const local = new Intl.DateTimeFormat('en-GB', {
        timeZone: timezone,
        dateStyle: 'full',
        timeStyle: 'long',
      }).format(date);
      return { iso: date.toISOString(), timezone, local, unixMs: date.getTime() };
    },
  });
}

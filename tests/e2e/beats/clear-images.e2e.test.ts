/**
 * Issue 9, beats acceptance 3: the reserved beat `__clear_images__` ships in heartbeats.default.json
 * (daily), runs natively and empties `images`; the fake model receives no request.
 */
import path from 'node:path';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { insertSession } from '../../support/fixtures';
import { dataOf } from '../../support/graphql-client';
import { BeatsDocument, MeDocument, RunBeatDocument } from '../../support/graphql/generated';
import { startTestApp, type TestApp } from '../../support/test-app';
import { Image } from '../../../server/modules/sessions';
import { nextCronRuns } from '../../../server/modules/beats';

const SHIPPED = path.resolve(__dirname, '../../../heartbeats.default.json');

describe('__clear_images__', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    t = await startTestApp({ config: { ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model' } } }, beats: { default_file: SHIPPED } } });
  });
  afterAll(async () => {
    await t.close();
    await model.close();
  });

  it('is shipped as a daily managed beat and empties images without a model call', async () => {
    const owner = t.client(t.ownerToken);
    const beat = dataOf(await owner.http(BeatsDocument, {})).beats.find((b) => b.name === '__clear_images__')!;
    expect(beat).toMatchObject({ managed: true, enabled: true, userId: null });
    const runs = nextCronRuns(beat.cron!, beat.timezone, new Date(), 3);
    expect(runs[1]!.getTime() - runs[0]!.getTime()).toBe(86_400_000);
    expect(beat.nextRuns).toHaveLength(5);

    const ctx = t.app.systemCtx('test');
    const me = dataOf(await owner.http(MeDocument, {})).me;
    const { messageId } = await insertSession(t, me.id, 'look at these');
    const images = t.app.db.repo(ctx, Image);
    await images.save([
      images.create({ messageId, mimeType: 'image/png', dataBase64: 'iVBORw0KGgo=' }),
      images.create({ messageId, mimeType: 'image/jpeg', dataBase64: '/9j/4AAQ' }),
      images.create({ messageId: null, mimeType: 'image/png', dataBase64: 'iVBORw0KGgo=' }),
    ]);
    expect(await images.count()).toBe(3);

    const run = dataOf(await owner.http(RunBeatDocument, { id: beat.id })).runBeat;
    expect(run).toMatchObject({ status: 'OK', trigger: 'MANUAL', output: 'Removed 3 images.', error: null, inputTokens: 0, outputTokens: 0 });
    expect(await images.count()).toBe(0);
    expect(model.chatRequests()).toHaveLength(0);
  });
});

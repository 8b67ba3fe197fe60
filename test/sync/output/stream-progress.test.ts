import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discoverStreams } from '../../../src/catalog/discovery.js';
import { REPORTS } from '../../../src/catalog/reports.js';
import { defaultSelection } from '../../../src/catalog/selection.js';
import { resolveConfig } from '../../../src/config/config.js';
import { airbyteProtocol } from '../../../src/airbyte/messages.js';
import { singer } from '../../../src/singer/messages.js';
import { createLogger } from '../../../src/observe/log.js';
import { MessageWriter } from '../../../src/output/writer.js';
import type { OutputProtocol } from '../../../src/output/protocol.js';
import { StreamProgress } from '../../../src/sync/output/stream-progress.js';
import { runSync } from '../../../src/sync/run.js';
import type { TapState } from '../../../src/state.js';
import { airbyteMessages, airbyteStates, streamSequence, streamTimeline, type AirbyteMessage } from '../../helpers/airbyte.js';
import { tempFolder } from '../../helpers/files.js';
import { startScopedSandbox, startTestSandbox, type Sandbox } from '../../helpers/sandbox.js';
import type { JsonObject } from '../../helpers/messages.js';

/** A stream's status lines and its STATE's record count, in process: StreamProgress alone, and the engine's runs with the Airbyte protocol over real HTTP. */

const STATUS_ONLY: OutputProtocol = { ...airbyteProtocol(new Set()), streamStatus: (stream, status) => `${stream} ${status}` };

function writerInto(): { writer: MessageWriter; text: () => string } {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(Buffer.from(chunk)));
  return { writer: new MessageWriter(out), text: () => Buffer.concat(chunks).toString('utf8') };
}

describe('StreamProgress', () => {
  it('says started, running once however often a read starts, and complete', async () => {
    const { writer, text } = writerInto();
    const progress = new StreamProgress('training', STATUS_ONLY, writer);
    progress.started();
    progress.running();
    progress.running();
    progress.complete();
    await writer.end();
    expect(text()).toBe('training started\ntraining running\ntraining complete\n');
  });

  it('sends incomplete on at once, with what the writer held before it: the run ends with the error', async () => {
    const { writer, text } = writerInto();
    const progress = new StreamProgress('phishing', STATUS_ONLY, writer);
    progress.started();
    writer.line('a record');
    progress.incomplete();
    await new Promise((resolve) => setImmediate(resolve));
    expect(text()).toBe('phishing started\na record\nphishing incomplete\n');
  });

  it('writes nothing for a protocol without status lines (Singer)', async () => {
    const { writer, text } = writerInto();
    const progress = new StreamProgress('training', singer, writer);
    progress.started();
    progress.running();
    progress.incomplete();
    progress.complete();
    await writer.end();
    expect(text()).toBe('');
  });
});

describe('an Airbyte read in process: each stream framed by its statuses, its STATE counting its records', () => {
  let sandbox: Sandbox;
  const stores = new Map<Sandbox, string>();
  beforeAll(async () => {
    sandbox = await startTestSandbox({ trainingRecords: 120, phishingRecords: 80 });
  });
  afterAll(() => sandbox.close());

  async function read(target: Sandbox, extra: JsonObject = {}, state?: TapState): Promise<{ messages: AirbyteMessage[]; error?: unknown }> {
    // The change store of the sandbox's earlier reads: a next read sends only what changed.
    const config = resolveConfig({ base_url: target.url, access_token: 'demo-token', store_directory: stores.get(target) ?? stores.set(target, tempFolder('progress-store')).get(target), ...extra });
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    // A copy: the writer uses its blocks again once they are written.
    out.on('data', (chunk: Buffer) => chunks.push(Buffer.from(chunk)));
    const streams = defaultSelection(discoverStreams(config, REPORTS));
    let error: unknown;
    await runSync({ config, streams, state, out, protocol: airbyteProtocol(new Set()), logger: createLogger({ write: () => undefined }), redact: (text) => text }).catch((e: unknown) => {
      error = e;
    });
    return { messages: airbyteMessages(Buffer.concat(chunks).toString('utf8')), error };
  }

  it('STARTED, RUNNING, the records, STATE with their count, COMPLETE; a next read of a few new records counts those, one with none 0', async () => {
    const first = await read(sandbox);
    expect(first.error).toBeUndefined();
    expect(streamSequence(first.messages)).toEqual(['training', 'phishing']);
    expect(streamTimeline(first.messages, 'training')).toEqual(['STARTED', 'RUNNING', `RECORD×${sandbox.recordCount('training')}`, `STATE ${sandbox.recordCount('training')}`, 'COMPLETE']);
    expect(streamTimeline(first.messages, 'phishing')).toEqual(['STARTED', 'RUNNING', 'RECORD×80', 'STATE 80', 'COMPLETE']);

    sandbox.append('training', 3);
    const state = { bookmarks: Object.fromEntries(airbyteStates(first.messages).map((s) => [s.stream.stream_descriptor.name, s.stream.stream_state])) } as TapState;
    const second = await read(sandbox, {}, state);
    // A STATE after the incremental read that sent the three (a checkpoint: docs/airbyte-state.md), then one after the open rows.
    expect(streamTimeline(second.messages, 'training')).toEqual(['STARTED', 'RUNNING', 'RECORD×3', 'STATE 3', 'STATE 0', 'COMPLETE']);
    expect(streamTimeline(second.messages, 'phishing')).toEqual(['STARTED', 'RUNNING', 'STATE 0', 'COMPLETE']);
  });

  it('a change pass counts the changed rows it sends and the delete records of the leavers, and not the unchanged rows it read', async () => {
    const own = await startTestSandbox({ seed: 5, trainingRecords: 200, phishingRecords: 100 });
    try {
      const first = await read(own);
      const [day] = own.simulateDays(1);
      expect(day.leavers.length).toBeGreaterThan(0);
      const state = { bookmarks: Object.fromEntries(airbyteStates(first.messages).map((s) => [s.stream.stream_descriptor.name, structuredClone(s.stream.stream_state)])) } as TapState;
      // The last passes a day and an hour ago: the change pass is due.
      for (const bookmark of Object.values(state.bookmarks!)) bookmark.full_pass!.at = new Date(Date.now() - 25 * 3_600_000).toISOString();
      const pass = await read(own, {}, state);
      expect(pass.error).toBeUndefined();
      for (const stream of ['training', 'phishing']) {
        const records = pass.messages.filter((m) => m.record?.stream === stream);
        expect(streamTimeline(pass.messages, stream), stream).toEqual(['STARTED', 'RUNNING', `RECORD×${records.length}`, `STATE ${records.length}`, 'COMPLETE']);
      }
      const training = pass.messages.filter((m) => m.record?.stream === 'training');
      expect(training.some((m) => m.record!.data._ab_cdc_deleted_at != null), 'delete records').toBe(true);
      expect(training.length).toBeLessThan(own.recordCount('training'));
    } finally {
      await own.close();
    }
  });

  it('a stream the token may not read: the one before it COMPLETE, it STARTED then INCOMPLETE, and the read fails', async () => {
    const scoped = await startScopedSandbox({ full: 'full-token', trainingOnly: 'training-token' }, 30);
    try {
      const { messages, error } = await read(scoped, { access_token: 'training-token' });
      expect(String(error)).toMatch(/HTTP 403/);
      expect(streamTimeline(messages, 'training')).toEqual(['STARTED', 'RUNNING', 'RECORD×30', 'STATE 30', 'COMPLETE']);
      expect(streamTimeline(messages, 'phishing')).toEqual(['STARTED', 'INCOMPLETE']);
    } finally {
      await scoped.close();
    }
  });

  it('a dump that breaks for good after some records: STARTED, RUNNING, those records, INCOMPLETE, and no STATE', async () => {
    const cutting = await startTestSandbox({ trainingRecords: 600, phishingRecords: 5, faults: { dropAfterBytes: 20_000, dropRate: 1 } });
    try {
      const { messages, error } = await read(cutting, { max_retries: 0, compression: 'none' });
      expect(String(error)).toMatch(/training dump/);
      const timeline = streamTimeline(messages, 'training');
      expect(timeline[0]).toBe('STARTED');
      expect(timeline[1]).toBe('RUNNING');
      expect(timeline[2]).toMatch(/^RECORD×\d+$/);
      expect(timeline.slice(3)).toEqual(['INCOMPLETE']);
      expect(streamSequence(messages)).toEqual(['training']);
    } finally {
      await cutting.close();
    }
  });
});

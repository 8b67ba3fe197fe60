import { describe, expect, it } from 'vitest';
import { discoverStream, discoverStreams } from '../../src/catalog/discovery.js';
import { loadSchema } from '../../src/catalog/schemas.js';
import { PHISHING, REPORTS, TRAINING, type StreamDescriptor } from '../../src/catalog/reports.js';
import { EXIT_BAD_INPUT, TapError } from '../../src/errors.js';
import { tapErrorOf } from '../helpers/errors.js';

describe('discoverStreams without settings', () => {
  it('offers every packaged report, in REPORTS order, each with its packaged schema, key properties and replication key', () => {
    const streams = discoverStreams({});
    expect(streams.map((s) => s.descriptor)).toEqual([TRAINING, PHISHING]);
    expect(streams.map((s) => ({ name: s.descriptor.name, keyProperties: s.keyProperties, replicationKey: s.replicationKey, keysFromSettings: s.keysFromSettings }))).toEqual([
      { name: 'training', keyProperties: ['userId', 'programId', 'moduleId'], replicationKey: 'completedAt', keysFromSettings: false },
      { name: 'phishing', keyProperties: ['userId', 'campaignId'], replicationKey: 'sentAt', keysFromSettings: false },
    ]);
    expect(streams[0].schema).toEqual(loadSchema('training.json'));
    expect(streams[1].schema).toEqual(loadSchema('phishing.json'));
  });

  it('gives the training stream exactly the fields of schemas/training.json', () => {
    const [training] = discoverStreams({});
    expect(Object.keys(training.schema.properties!)).toEqual([
      'userId', 'email', 'firstName', 'lastName', 'employeeNumber', 'groupId', 'programId', 'programName', 'moduleId',
      'moduleName', 'availableFrom', 'completed', 'completedAt', 'progress', 'score', 'timeSpentSeconds', 'lastActivityAt',
    ]);
  });

  it('hands each discovery its own schema, so narrowing one leaves the next discovery whole', () => {
    const first = discoverStreams({});
    delete first[0].schema.properties!.email;
    first[1].schema.properties = {};
    const second = discoverStreams({});
    expect(second[0].schema.properties).toHaveProperty('email');
    expect(Object.keys(second[1].schema.properties!)).toHaveLength(12);
  });

  it('copies the key properties instead of sharing the descriptor\'s array', () => {
    const [training] = discoverStreams({});
    expect(training.keyProperties).not.toBe(TRAINING.keyProperties);
    expect(training.keyProperties).toEqual(TRAINING.keyProperties);
  });

  it('offers only the reports it is given', () => {
    const audit: StreamDescriptor = { ...PHISHING, name: 'phishing-copy' };
    expect(discoverStreams({}, [audit]).map((s) => s.descriptor.name)).toEqual(['phishing-copy']);
    expect(discoverStreams({}, [])).toEqual([]);
  });
});

describe('discoverStreams with the key_properties setting', () => {
  it('uses the configured keys for that stream only and marks them as coming from the settings', () => {
    const [training, phishing] = discoverStreams({ key_properties: { phishing: ['campaignId', 'employeeNumber'] } });
    expect(phishing.keyProperties).toEqual(['campaignId', 'employeeNumber']);
    expect(phishing.keysFromSettings).toBe(true);
    expect(phishing.replicationKey).toBe('sentAt');
    expect(training.keyProperties).toEqual(['userId', 'programId', 'moduleId']);
    expect(training.keysFromSettings).toBe(false);
  });

  it('treats a setting that leaves a stream undefined as no setting for it', () => {
    const [training] = discoverStreams({ key_properties: { training: undefined } });
    expect(training.keyProperties).toEqual(['userId', 'programId', 'moduleId']);
    expect(training.keysFromSettings).toBe(false);
  });

  it('rejects a configured key the stream lacks with a config error (exit 2) naming the setting, the field and the stream', () => {
    const error = tapErrorOf(() => discoverStreams({ key_properties: { phishing: ['userId', 'department'] } }));
    expect(error.message).toBe(
      "Setting key_properties.phishing names department, which the packaged phishing schema does not have, and this run has not learnt the service's own field names. Run discover (discovery live, with a token that may read the dump) and sync with its catalog, or name a field of the packaged schema.",
    );
    expect(error.exitCode).toBe(EXIT_BAD_INPUT);
    expect(error.exitCode).toBe(2);
    expect(error.kind).toBe('config');
    expect(error.failureType).toBe('config_error');
  });

  it('rejects a key that exists in another stream but not in this one', () => {
    const error = tapErrorOf(() => discoverStream(TRAINING, { key_properties: { training: ['campaignId'] } }));
    expect(error.message).toBe(
      "Setting key_properties.training names campaignId, which the packaged training schema does not have, and this run has not learnt the service's own field names. Run discover (discovery live, with a token that may read the dump) and sync with its catalog, or name a field of the packaged schema.",
    );
    expect(error.exitCode).toBe(2);
  });

  it('checks every report, so a bad setting for the second stream fails the whole discovery', () => {
    expect(() => discoverStreams({ key_properties: { phishing: ['nope'] } }, REPORTS)).toThrow(
      new TapError("Setting key_properties.phishing names nope, which the packaged phishing schema does not have, and this run has not learnt the service's own field names. Run discover (discovery live, with a token that may read the dump) and sync with its catalog, or name a field of the packaged schema.", 'config'),
    );
  });
});

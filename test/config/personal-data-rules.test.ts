import { configErrorOf as configError } from '../helpers/errors.js';
import { describe, expect, it } from 'vitest';
import { hasObjectFormPersonalData, resolveConfig } from '../../src/config/config.js';
import { checkRulesDistinct, objectFormWarning, rulesFromObjectForm } from '../../src/config/personal-data-rules.js';

const BASE = { base_url: 'https://api.example.com', access_token: 't' };
const STREAMS = ['training', 'phishing'];

/** The config error's message (helpers/errors.ts checks it is one: exit code 2). */
const configErrorOf = (action: () => unknown): string => configError(action).message;

const FIX = 'Fix the config file or TAP_REPORT_DUMP_* variable that sets it (tap-report-dump --about lists every setting).';

describe('personal_data as a list of rules', () => {
  it('is read as written, each rule for every stream or for its stream', () => {
    const personal_data = [{ field: 'email', policy: 'hash' }, { field: 'firstName', policy: 'drop', stream: 'training' }];
    expect(resolveConfig({ ...BASE, personal_data }).personal_data).toEqual(personal_data);
    expect(resolveConfig(BASE).personal_data).toEqual([]);
  });

  it('refuses a wrong rule in one line naming personal_data[i] and what it must be', () => {
    const messageOf = (personal_data: unknown): string => configErrorOf(() => resolveConfig({ ...BASE, personal_data }));
    expect(messageOf([{ field: 'email', policy: 'hash' }, { field: 'email', policy: 'shred' }])).toBe(
      `Invalid config: setting personal_data[1].policy must be one of keep, drop, redact, hash, hash_keep_domain. ${FIX}`,
    );
    expect(messageOf([{ policy: 'hash' }])).toBe(`Invalid config: missing required setting personal_data[0].field. ${FIX}`);
    expect(messageOf([{ field: 'email', policy: 'hash', stream: 'trainings' }])).toBe(`Invalid config: setting personal_data[0].stream must be one of training, phishing. ${FIX}`);
    expect(messageOf([{ field: '', policy: 'drop' }])).toBe(`Invalid config: setting personal_data[0].field must be a non-empty string. ${FIX}`);
    for (const wrong of [[{ field: 'email', policy: 'hash', stream: 'trainings' }], [{ policy: 'hash' }]]) expect(messageOf(wrong)).not.toMatch(/\n/);
  });

  it('refuses two rules for one field of one stream, matched ignoring case and punctuation, naming both', () => {
    const twice = [{ field: 'email', policy: 'hash' }, { field: 'firstName', policy: 'drop' }, { field: 'E-mail', policy: 'drop' }];
    expect(configErrorOf(() => resolveConfig({ ...BASE, personal_data: twice }))).toBe(
      'Setting personal_data[0] (field email) and personal_data[2] (field E-mail) are two rules for one field of every stream (field names match ignoring case and punctuation); keep one.',
    );
    expect(configErrorOf(() => checkRulesDistinct([{ field: 'userId', policy: 'hash', stream: 'phishing' }, { field: 'user_id', policy: 'hash', stream: 'phishing' }]))).toMatch(
      /^Setting personal_data\[0\] \(field userId\) and personal_data\[1\] \(field user_id\) are two rules for one field of the phishing stream/,
    );
    // One rule for a stream and one for every stream is how a stream gets its own policy; two streams are two fields.
    expect(() => checkRulesDistinct([{ field: 'email', policy: 'hash' }, { field: 'email', policy: 'redact', stream: 'training' }, { field: 'email', policy: 'drop', stream: 'phishing' }])).not.toThrow();
  });
});

describe('personal_data in the deprecated object form', () => {
  const OBJECT_FORM = { '*': { email: 'hash', firstName: 'drop' }, phishing: { employeeNumber: 'redact' } };

  it('is read as the same rules, "*" as every stream', () => {
    const rules = [{ field: 'email', policy: 'hash' }, { field: 'firstName', policy: 'drop' }, { field: 'employeeNumber', policy: 'redact', stream: 'phishing' }];
    expect(rulesFromObjectForm(OBJECT_FORM, STREAMS)).toEqual(rules);
    expect(resolveConfig({ ...BASE, personal_data: OBJECT_FORM }).personal_data).toEqual(rules);
    expect(hasObjectFormPersonalData({ ...BASE, personal_data: OBJECT_FORM })).toBe(true);
    expect(hasObjectFormPersonalData({ ...BASE, personal_data: rules })).toBe(false);
    expect(resolveConfig({ ...BASE, personal_data: {} }).personal_data).toEqual([]);
  });

  it('gets a warning showing the list to write instead, with field names and policies only', () => {
    expect(objectFormWarning(rulesFromObjectForm(OBJECT_FORM, STREAMS))).toBe(
      'Setting personal_data is written in the deprecated object form ({"*": {…}, "<stream>": {…}}); write it as a list of rules instead, the same policies: [{"field":"email","policy":"hash"},{"field":"firstName","policy":"drop"},{"field":"employeeNumber","policy":"redact","stream":"phishing"}].',
    );
  });

  it('refuses in one line, in its own terms, what the object form took wrongly: a stream that is none, a map that is none, a policy that is none', () => {
    expect(configErrorOf(() => resolveConfig({ ...BASE, personal_data: { trainings: { email: 'hash' } } }))).toBe(
      'Setting personal_data.trainings names no stream; use "*" for every stream or one of training, phishing (or the list form: tap-report-dump --about describes it).',
    );
    expect(configErrorOf(() => resolveConfig({ ...BASE, personal_data: { '*': ['email'] } }))).toBe('Setting personal_data."*" must be a JSON object of field names and policies, such as {"email": "hash"}.');
    expect(configErrorOf(() => resolveConfig({ ...BASE, personal_data: { training: { email: 'shred' } } }))).toBe('Setting personal_data.training.email must be one of keep, drop, redact, hash, hash_keep_domain.');
  });

  it('keeps two names of one field in one map a config error, as in the list', () => {
    expect(configErrorOf(() => resolveConfig({ ...BASE, personal_data: { training: { email: 'hash', 'E-Mail': 'drop' } } }))).toMatch(/^Setting personal_data\[0\] \(field email\) and personal_data\[1\] \(field E-Mail\) are two rules for one field of the training stream/);
  });
});

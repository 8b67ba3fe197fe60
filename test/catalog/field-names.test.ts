import { describe, expect, it } from 'vitest';
import { normalizeFieldName, toSnakeCase } from '../../src/catalog/field-names.js';

describe('field names are matched after normalisation', () => {
  it('makes userId, user_id, USER_ID, User ID and user-id one field, and E-mail the field email', () => {
    for (const name of ['userId', 'user_id', 'USER_ID', 'User ID', 'user-id', ' user.id ']) expect(normalizeFieldName(name), name).toBe('userid');
    expect(normalizeFieldName('E-mail')).toBe('email');
    expect(normalizeFieldName('email_address')).not.toBe(normalizeFieldName('email'));
  });

  it('keeps letters and digits of any script', () => {
    expect(normalizeFieldName('Prénom 2')).toBe('prénom2');
    expect(normalizeFieldName('名前')).toBe('名前');
  });
});

describe('snake_case names', () => {
  it.each([
    ['userId', 'user_id'],
    ['User ID', 'user_id'],
    ['E-mail', 'e_mail'],
    ['completedAt', 'completed_at'],
    ['Completed At', 'completed_at'],
    ['completed_at', 'completed_at'],
    ['HTTPStatus', 'http_status'],
    ['timeSpentSeconds', 'time_spent_seconds'],
    ['score2', 'score2'],
    ['  Last  Name ', 'last_name'],
  ])('%s → %s', (name, snake) => {
    expect(toSnakeCase(name)).toBe(snake);
  });
});

import { expect } from 'vitest';
import { EXIT_BAD_INPUT, TapError } from '../../src/errors.js';

/** Runs `body` and returns the TapError it throws; fails the test when it throws nothing or something else. */
export function tapErrorOf(body: () => unknown): TapError {
  try {
    body();
  } catch (error) {
    expect(error).toBeInstanceOf(TapError);
    return error as TapError;
  }
  throw new Error('expected a TapError, but nothing was thrown');
}

/** The config error `body` throws: a TapError of kind config, exit code 2, Airbyte failure type config_error. */
export function configErrorOf(body: () => unknown): TapError {
  const error = tapErrorOf(body);
  expect(error.kind).toBe('config');
  expect(error.exitCode).toBe(EXIT_BAD_INPUT);
  expect(error.failureType).toBe('config_error');
  return error;
}

/** A record (or line, or row) that cannot be made to fit its schema: skipped or fatal, by the invalid-record policy. */
export class InvalidRecordError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidRecordError';
  }
}

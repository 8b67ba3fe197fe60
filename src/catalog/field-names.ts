/**
 * Field names as the service may spell them: `userId`, `user_id`, `USER_ID`,
 * `User ID` and `user-id` are one field, `E-mail` is `email`. Compared after
 * lower-casing and keeping letters and digits only.
 */
export function normalizeFieldName(name: string): string {
  return name.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');
}

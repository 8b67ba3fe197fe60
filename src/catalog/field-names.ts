/**
 * Field names as the service may spell them: `userId`, `user_id`, `USER_ID`,
 * `User ID` and `user-id` are one field, `E-mail` is `email`. Compared after
 * lower-casing and keeping letters and digits only.
 */
export function normalizeFieldName(name: string): string {
  return name.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');
}

/** `userId` → `user_id`, `User ID` → `user_id`, `E-mail` → `e_mail`, `HTTPStatus` → `http_status`, `completed_at` unchanged. */
export function toSnakeCase(name: string): string {
  return name
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1_$2')
    .replace(/(\p{Lu}+)(\p{Lu}\p{Ll})/gu, '$1_$2')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '_')
    .replace(/^_+|_+$/g, '');
}

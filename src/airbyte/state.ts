import { configError } from '../errors.js';
import type { StreamBookmark, TapState } from '../state.js';

/** Airbyte state (a list of per-stream STATE blobs, a legacy object, or one message) as the tap's state. */
export function stateFromAirbyte(input: unknown, source: string): TapState {
  const bookmarks: Record<string, StreamBookmark> = {};
  const take = (message: unknown): void => {
    const m = message as { type?: string; stream?: { stream_descriptor?: { name?: unknown }; stream_state?: unknown }; data?: unknown; global?: { stream_states?: unknown[] } } | null;
    if (m?.type === 'STREAM' || m?.stream) {
      const name = m.stream?.stream_descriptor?.name;
      if (typeof name !== 'string') throw configError(`State ${source}: a STREAM state has no stream_descriptor.name. Pass the state Airbyte saved for this connection, or remove that entry.`);
      const blob = m.stream?.stream_state;
      if (blob !== undefined && blob !== null) bookmarks[name] = blob as StreamBookmark;
    } else if (m?.type === 'GLOBAL' && Array.isArray(m.global?.stream_states)) {
      for (const s of m.global.stream_states) take({ type: 'STREAM', stream: s });
    } else if (m && typeof m.data === 'object' && m.data !== null) {
      Object.assign(bookmarks, (m.data as TapState).bookmarks ?? {});
    } else {
      throw configError(`State ${source} is not an Airbyte state (a list of {"type": "STREAM", "stream": {...}} messages). Pass the state Airbyte saved for this connection, or run without --state.`);
    }
  };
  if (Array.isArray(input)) input.forEach(take);
  else if (input && typeof input === 'object' && 'bookmarks' in input) return input as TapState;
  else if (input !== null && input !== undefined && !(typeof input === 'object' && Object.keys(input).length === 0)) take(input);
  return { bookmarks };
}
